import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

@Suite struct TransformerTests {
    /// A width × height image whose pixel (x, y) is opaque (x, y, x + y).
    static func numbered(_ width: Int, _ height: Int) -> PixelBuffer {
        var bytes: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width { bytes += [UInt8(x), UInt8(y), UInt8(x + y), 255] }
        }
        return PixelBuffer(width: width, height: height, premultipliedRGBA: bytes)
    }

    static func apply(_ transformer: any ImageTransformer, to pixels: PixelBuffer) throws -> PixelBuffer {
        try #require(transformer.transform(Image(pixels: pixels), forKey: "key")).pixels
    }

    @Test func flipsAreExact() throws {
        let source = Self.numbered(4, 3)
        let horizontal = try Self.apply(FlippingTransformer(horizontal: true, vertical: false), to: source)
        #expect(horizontal.pixel(x: 0, y: 1) == source.pixel(x: 3, y: 1))
        let both = try Self.apply(FlippingTransformer(horizontal: true, vertical: true), to: source)
        #expect(both.pixel(x: 0, y: 0) == source.pixel(x: 3, y: 2))
    }

    @Test func quarterTurnsAreExactAndCounterClockwise() throws {
        let source = Self.numbered(4, 3)
        let turned = try Self.apply(RotationTransformer(degrees: 90), to: source)
        #expect(turned.width == 3 && turned.height == 4)
        #expect(turned.pixel(x: 0, y: 0) == source.pixel(x: 3, y: 0), "the top-right corner comes to the top left")
        let back = try Self.apply(RotationTransformer(degrees: -90), to: turned)
        #expect(back == source)
        #expect(
            try Self.apply(RotationTransformer(degrees: 540), to: source) == (try Self.apply(RotationTransformer(degrees: 180), to: source))
        )
        let cropped = try Self.apply(RotationTransformer(degrees: 30, fitsSize: false), to: source)
        #expect(cropped.width == 4 && cropped.height == 3)
    }

    @Test func cropsClipToTheImage() throws {
        let source = Self.numbered(10, 8)
        let inside = try Self.apply(CroppingTransformer(x: 2, y: 3, width: 4, height: 2), to: source)
        #expect(inside.width == 4 && inside.height == 2 && inside.pixel(x: 0, y: 0) == source.pixel(x: 2, y: 3))
        let clipped = try Self.apply(CroppingTransformer(x: 8, y: 6, width: 5, height: 5), to: source)
        #expect(clipped.width == 2 && clipped.height == 2)
        #expect(CroppingTransformer(x: 20, y: 0, width: 5, height: 5).transform(Image(pixels: source), forKey: "k") == nil)
    }

    @Test func centreCropAndAspectModes() throws {
        let source = Self.numbered(80, 60)
        let wide = try Self.apply(CenterCropTransformer(aspectWidth: 16, aspectHeight: 9), to: source)
        #expect(wide.width == 80 && wide.height == 45 && wide.pixel(x: 0, y: 0) == source.pixel(x: 0, y: 7))
        let fit = try Self.apply(ResizingTransformer(width: 40, height: 40, mode: .aspectFit), to: source)
        #expect(fit.width == 40 && fit.height == 30)
        let fill = try Self.apply(ResizingTransformer(width: 40, height: 40, mode: .aspectFill), to: source)
        #expect(fill.width == 40 && fill.height == 40)
        let stretch = try Self.apply(ResizingTransformer(width: 17, height: 90), to: source)
        #expect(stretch.width == 17 && stretch.height == 90)
    }

    /// Opaque red beside fully transparent pixels that a naive resize would treat as black.
    @Test(arguments: ResamplingFilter.allCases)
    func resizeLeavesNoDarkFringes(filter: ResamplingFilter) throws {
        var straight: [UInt8] = []
        for _ in 0..<40 {
            for x in 0..<40 { straight += x < 20 ? [255, 0, 0, 255] : [0, 255, 0, 0] }
        }
        let source = PixelBuffer(width: 40, height: 40, straightRGBA: straight)
        for size in [(13, 13), (97, 61)] {
            let resized = try Self.apply(ResizingTransformer(width: size.0, height: size.1, filter: filter), to: source)
            let pixels = resized.bytes
            for offset in stride(from: 0, to: pixels.count, by: 4) where pixels[offset + 3] > 0 {
                #expect(
                    pixels[offset] >= 250 && pixels[offset + 1] == 0 && pixels[offset + 2] == 0,
                    "pixel \(offset / 4) is \(pixels[offset..<offset + 4]) at \(size)")
            }
        }
    }

    @Test func roundCornersCutTheCornersAndDrawTheBorder() throws {
        let source = PixelBuffer(
            width: 40, height: 30,
            straightRGBA: [UInt8](repeating: 200, count: 40 * 30 * 4).enumerated().map { $0.offset % 4 == 3 ? 255 : 200 })
        let rounded = try Self.apply(RoundCornerTransformer(radius: 10), to: source)
        #expect(rounded.pixel(x: 0, y: 0).alpha == 0)
        #expect(rounded.pixel(x: 39, y: 29).alpha == 0)
        #expect(rounded.pixel(x: 20, y: 15) == source.pixel(x: 20, y: 15))
        #expect(rounded.pixel(x: 20, y: 0) == source.pixel(x: 20, y: 0), "straight edges stay")
        let some = try Self.apply(RoundCornerTransformer(radius: 10, corners: [.topLeft]), to: source)
        #expect(some.pixel(x: 0, y: 0).alpha == 0 && some.pixel(x: 39, y: 0).alpha == 255)
        let bordered = try Self.apply(
            RoundCornerTransformer(radius: 0, borderWidth: 2, borderColor: RGBAColor(red: 255, green: 0, blue: 0)), to: source)
        #expect(bordered.pixel(x: 0, y: 15) == (255, 0, 0, 255) && bordered.pixel(x: 1, y: 15) == (255, 0, 0, 255))
        #expect(bordered.pixel(x: 2, y: 15) == source.pixel(x: 2, y: 15))
    }

    @Test func tintKeepsTheShape() throws {
        let source = PixelBuffer(width: 2, height: 1, straightRGBA: [10, 20, 30, 255, 90, 90, 90, 0])
        let tinted = try Self.apply(TintTransformer(color: RGBAColor(red: 0, green: 128, blue: 255)), to: source)
        #expect(tinted.pixel(x: 0, y: 0) == (0, 128, 255, 255))
        #expect(tinted.pixel(x: 1, y: 0) == (0, 0, 0, 0))
    }

    @Test func blurKeepsAFlatImageFlat() throws {
        let flat = PixelBuffer(
            width: 30, height: 20,
            premultipliedRGBA: [UInt8](repeating: 0, count: 30 * 20 * 4).enumerated().map { [100, 50, 25, 255][$0.offset % 4] })
        #expect(try Self.apply(BlurTransformer(radius: 6), to: flat) == flat)
        #expect(try Self.apply(BlurTransformer(radius: 0), to: Self.numbered(5, 5)) == Self.numbered(5, 5))
    }

    @Test func pipelineAppliesInOrderAndJoinsKeys() throws {
        let pipeline = PipelineTransformer([
            CroppingTransformer(x: 0, y: 0, width: 10, height: 10), ResizingTransformer(width: 5, height: 5),
        ])
        #expect(pipeline.transformerKey == "crop:10x10+0+0,resize:5x5:fill:lanczos3")
        let result = try Self.apply(pipeline, to: Self.numbered(30, 20))
        #expect(result.width == 5 && result.height == 5)
    }

    @Test func everyFrameIsTransformedAndKeepsItsDuration() throws {
        let frames = [
            ImageFrame(pixels: Self.numbered(8, 6), duration: .milliseconds(100)),
            ImageFrame(pixels: Self.numbered(8, 6), duration: .milliseconds(250)),
        ]
        let animation = Image(frames: frames, loopCount: 3, hasAlpha: false)
        let result = try #require(ResizingTransformer(width: 4, height: 3).transform(animation, forKey: "k"))
        #expect(result.frames.count == 2 && result.frames.allSatisfy { $0.pixels.width == 4 && $0.pixels.height == 3 })
        #expect(result.frames[1].duration == .milliseconds(250) && result.loopCount == 3)
    }

    /// 256 × 1200 is above the size that splits rows across cores: every output row must still
    /// come from its own source rows, in order.
    @Test func largeImagesSplitAcrossCoresKeepRowOrder() throws {
        var bytes: [UInt8] = []
        for y in 0..<1200 {
            for x in 0..<256 { bytes += [UInt8(x), UInt8(y / 5), 0, 255] }
        }
        let large = PixelBuffer(width: 256, height: 1200, premultipliedRGBA: bytes)
        let narrower = try Self.apply(ResizingTransformer(width: 100, height: 1200), to: large)
        for y in 0..<1200 { #expect(narrower.pixel(x: 50, y: y).green == UInt8(y / 5)) }
        let shorter = try Self.apply(ResizingTransformer(width: 256, height: 600, filter: .bilinear), to: large)
        for y in 2..<598 {
            let expected = (Double(2 * y) + 0.5) / 5
            #expect(abs(Double(shorter.pixel(x: 9, y: y).green) - expected) <= 1.5, "row \(y)")
        }
        let blurred = try Self.apply(BlurTransformer(radius: 2), to: large)
        for y in stride(from: 10, to: 1190, by: 7) {
            #expect(abs(Double(blurred.pixel(x: 100, y: y).green) - Double(y) / 5) <= 1.5, "row \(y)")
        }
    }
}
