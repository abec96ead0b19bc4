import Foundation
import Testing
import WebImageCaching
import WebImageCodecs
import WebImageTestSupport

@Suite struct TransformSpecTests {
    @Test func theIssuesExampleParses() throws {
        let transformer = try TransformSpec.parse("resize:300x200:fill,round:16,blur:4")
        #expect(transformer.transformerKey == "resize:300x200:fill:lanczos3,round:16:all:0:#000000,blur:4")
        let pipeline = try #require(transformer as? PipelineTransformer)
        #expect(pipeline.transformers.count == 3)
    }

    @Test(arguments: [
        ("resize:30x20", "resize:30x20:fill:lanczos3"),
        ("resize:30x20:fit:nearest", "resize:30x20:aspectfit:nearest"),
        ("resize:30x20:bilinear:cover", "resize:30x20:aspectfill:bilinear"),
        ("crop:10x20+3+4", "crop:10x20+3+4"),
        ("centercrop:16:9", "centercrop:16:9"),
        ("round:8:tl+br:2:#FF0000", "round:8:tl+br:2:#ff0000"),
        ("flip:vh", "flip:hv"),
        ("rotate:-45", "rotate:-45:fit"),
        ("rotate:12.5:crop", "rotate:12.5:crop"),
        ("orient", "orient"),
        ("tint:#11223380", "tint:#11223380"),
        ("blur:2.5", "blur:2.5"),
        ("sharpen:1.5", "sharpen:1.5"),
        ("sharpen:1:0.5", "sharpen:1:0.5"),
        ("pixelate:8", "pixelate:8"),
        ("canvas:30x20+-2+3", "canvas:30x20+-2+3:#00000000"),
        ("canvas:30x20+0+0:#FFFFFF", "canvas:30x20+0+0:#ffffff"),
        ("smartcrop:30x20", "smartcrop:30x20"),
        ("background:#00ff00", "background:#00ff00"),
        (" resize:1x1 , blur:1 ", "resize:1x1:fill:lanczos3,blur:1"),
    ])
    func specsHaveCanonicalKeysThatParseBack(spec: String, key: String) throws {
        let transformer = try TransformSpec.parse(spec)
        #expect(transformer.transformerKey == key)
        #expect(try TransformSpec.parse(key).transformerKey == key)
    }

    @Test(arguments: [
        ("", "empty"),
        ("resize", "expected resize:WxH"),
        ("resize:300", "a size is WxH"),
        ("resize:0x10", "width must be a whole number"),
        ("resize:100000x100000", "width must be a whole number"),
        ("resize:20000x20000", "more than"),
        ("resize:10x10:sideways", "neither a mode"),
        ("blur:-1", "radius must be a number"),
        ("blur:nan", "radius must be a number"),
        ("round:4:middle", "unknown corner"),
        ("tint:#12345", "a colour is"),
        ("flip:x", "flip takes"),
        ("rotate:10:wide", "fit or crop"),
        ("emboss:2", "unknown transform \"emboss\""),
        ("canvas:10x10", "canvas takes WxH+X+Y"),
        ("pixelate:0", "block size must be a whole number"),
        ("resize:10x10,,blur:1", "step 2"),
        ("orient:1", "expected orient"),
    ])
    func badSpecsGiveClearErrors(spec: String, expected: String) {
        do {
            _ = try TransformSpec.parse(spec)
            Issue.record("\"\(spec)\" parsed")
        } catch {
            #expect(error.code == .invalidTransformSpec)
            #expect((error.message ?? "").contains(expected), "\(error)")
        }
    }

    /// Random built-in transformers: different transformers never share a variant key, and no
    /// variant key is the original's.
    @Test func transformedVariantKeysNeverCollide() throws {
        var generator = SplitMix64(seed: 7)
        func small() -> Int { Int(generator.next() % 4) + 1 }
        func pick() -> any ImageTransformer {
            switch generator.next() % 9 {
            case 0:
                ResizingTransformer(
                    width: small(), height: small(), mode: ResizeMode.allCases[Int(generator.next() % 3)],
                    filter: ResamplingFilter.allCases[Int(generator.next() % 3)])
            case 1: CroppingTransformer(x: small(), y: small(), width: small(), height: small())
            case 2: CenterCropTransformer(aspectWidth: small(), aspectHeight: small())
            case 3:
                RoundCornerTransformer(
                    radius: Double(small()) / 2, corners: RectCorners(rawValue: small()), borderWidth: Double(small() - 1))
            case 4: FlippingTransformer(horizontal: generator.next() % 2 == 0, vertical: true)
            case 5: RotationTransformer(degrees: Double(small()) * 22.5, fitsSize: generator.next() % 2 == 0)
            case 6: OrientationTransformer()
            case 7: TintTransformer(color: RGBAColor(red: UInt8(small()), green: 0, blue: 0, alpha: UInt8(254 + generator.next() % 2)))
            default: BlurTransformer(radius: Double(small()) / 4)
            }
        }
        var seen: [String: String] = [:]
        let original = CacheKey("https://example.com/a.png")
        for _ in 0..<5_000 {
            let transformer = (0..<small()).map { _ in pick() }
            let pipeline = transformer.count == 1 ? transformer[0] : PipelineTransformer(transformer)
            let key = CacheKey(original.original, transformerKey: pipeline.transformerKey)
            #expect(key.stringValue != original.stringValue)
            let canonical = try TransformSpec.parse(pipeline.transformerKey).transformerKey
            if let earlier = seen[key.stringValue] { #expect(earlier == canonical) }
            seen[key.stringValue] = canonical
        }
        #expect(seen.count > 1_000)
    }
}
