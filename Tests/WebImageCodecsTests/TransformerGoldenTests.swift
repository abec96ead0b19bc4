import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// Our transformers beside Pillow on the same picture (scripts/fixtures/make_transform_goldens.py).
/// Tolerances are the largest channel difference allowed: Pillow rounds to 8 bits between
/// passes and uses fixed-point weights, we keep floats, so a few levels apart is expected.
@Suite struct TransformerGoldenTests {
    static func decode(_ name: String) throws -> PixelBuffer {
        try CodersManager.shared.decode(try Fixture.data("transform/" + name)).pixels
    }

    static func source() throws -> Image {
        Image(pixels: try decode("source.png"))
    }

    /// The largest channel difference over pixels where `include` holds.
    static func maximumDifference(_ ours: PixelBuffer, _ theirs: PixelBuffer, include: (Int, Int) -> Bool = { _, _ in true }) -> Int {
        #expect(
            ours.width == theirs.width && ours.height == theirs.height,
            "sizes differ: \(ours.width)x\(ours.height) vs \(theirs.width)x\(theirs.height)")
        guard ours.width == theirs.width, ours.height == theirs.height else { return .max }
        var worst = 0
        for y in 0..<ours.height {
            for x in 0..<ours.width where include(x, y) {
                let a = ours.pixel(x: x, y: y)
                let b = theirs.pixel(x: x, y: y)
                worst = max(
                    worst, abs(Int(a.red) - Int(b.red)), abs(Int(a.green) - Int(b.green)), abs(Int(a.blue) - Int(b.blue)),
                    abs(Int(a.alpha) - Int(b.alpha)))
            }
        }
        return worst
    }

    @Test(arguments: [
        ("resize-31x23-lanczos3.png", ResizingTransformer(width: 31, height: 23, filter: .lanczos3), 1),
        ("resize-31x23-bilinear.png", ResizingTransformer(width: 31, height: 23, filter: .bilinear), 1),
        ("resize-31x23-nearest.png", ResizingTransformer(width: 31, height: 23, filter: .nearest), 0),
        ("resize-130x97-lanczos3.png", ResizingTransformer(width: 130, height: 97, filter: .lanczos3), 1),
    ])
    func resizeMatchesPillow(golden: String, transformer: ResizingTransformer, tolerance: Int) throws {
        let ours = try #require(transformer.transform(try Self.source(), forKey: "k")).pixels
        let difference = Self.maximumDifference(ours, try Self.decode(golden))
        #expect(difference <= tolerance, "\(golden): max channel difference \(difference)")
    }

    @Test func blurMatchesPillowsGaussianBlur() throws {
        let ours = try #require(BlurTransformer(radius: 3).transform(try Self.source(), forKey: "k")).pixels
        let difference = Self.maximumDifference(ours, try Self.decode("blur-3.png"))
        #expect(difference <= 2, "max channel difference \(difference)")
    }

    /// Pillow leaves rotated-out corners hard-edged where we anti-alias, so compare where both are opaque.
    @Test func rotationMatchesPillowInside() throws {
        let ours = try #require(RotationTransformer(degrees: 30).transform(try Self.source(), forKey: "k")).pixels
        let theirs = try Self.decode("rotate-30.png")
        let difference = Self.maximumDifference(ours, theirs) { x, y in
            ours.pixel(x: x, y: y).alpha == 255 && theirs.pixel(x: x, y: y).alpha == 255
        }
        #expect(difference <= 1, "max channel difference \(difference)")
        let opaque = { (buffer: PixelBuffer) in buffer.bytes.enumerated().filter { $0.offset % 4 == 3 && $0.element == 255 }.count }
        #expect(abs(opaque(ours) - opaque(theirs)) <= ours.width + ours.height, "opaque areas differ by more than an edge")
    }

    /// Translucent goldens (scripts/fixtures/make_alpha.py): Pillow premultiplies in 8 bits,
    /// transforms with 8-bit rounding between passes and divides back; we premultiply in floating
    /// point and keep 16 bits between resampling passes. Where alpha is low, one premultiplied
    /// level of Pillow's is many straight levels (255 / alpha), so colour is compared as what
    /// shows (`visible`: the straight difference times alpha), and straight where both pixels
    /// are at least half opaque (one of Pillow's levels is then at most two straight ones).
    struct TranslucentDifference: CustomStringConvertible {
        var alpha = 0
        var visible = 0
        var colourAboveHalf = 0
        var description: String { "alpha \(alpha), visible colour \(visible), colour at alpha ≥ 128 \(colourAboveHalf)" }
    }

    static func translucentDifference(_ ours: PixelBuffer, _ theirs: PixelBuffer, include: (Int, Int) -> Bool) -> TranslucentDifference {
        var worst = TranslucentDifference()
        #expect(ours.width == theirs.width && ours.height == theirs.height)
        guard ours.width == theirs.width, ours.height == theirs.height else { return TranslucentDifference(alpha: .max) }
        for y in 0..<ours.height {
            for x in 0..<ours.width where include(x, y) {
                let a = ours.pixel(x: x, y: y)
                let b = theirs.pixel(x: x, y: y)
                worst.alpha = max(worst.alpha, abs(Int(a.alpha) - Int(b.alpha)))
                let colour = max(abs(Int(a.red) - Int(b.red)), abs(Int(a.green) - Int(b.green)), abs(Int(a.blue) - Int(b.blue)))
                let shown = Int(min(a.alpha, b.alpha))
                worst.visible = max(worst.visible, (colour * shown + 254) / 255)
                if shown >= 128 { worst.colourAboveHalf = max(worst.colourAboveHalf, colour) }
            }
        }
        return worst
    }

    static func translucentSource() throws -> Image {
        Image(pixels: try CodersManager.shared.decode(try Fixture.data("alpha/translucent-rgba.png")).pixels)
    }

    @Test(arguments: [
        ("golden-resize-31x23-lanczos3.png", "resize:31x23:fill:lanczos3"),
        ("golden-resize-31x23-bilinear.png", "resize:31x23:fill:bilinear"),
        ("golden-resize-130x97-lanczos3.png", "resize:130x97:fill:lanczos3"),
        ("golden-blur-3.png", "blur:3"),
    ])
    func translucentTransformsMatchPillowsStraightAlpha(golden: String, spec: String) throws {
        let ours = try #require(try TransformSpec.parse(spec).transform(try Self.translucentSource(), forKey: "k")).pixels
        let theirs = try CodersManager.shared.decode(try Fixture.data("alpha/" + golden)).pixels
        let worst = Self.translucentDifference(ours, theirs) { _, _ in true }
        #expect(worst.alpha <= 1 && worst.visible <= 3 && worst.colourAboveHalf <= 3, "\(golden): \(worst)")
    }

    /// Pillow's rotated edges are hard where ours are anti-aliased: compare where the sample lies
    /// at least a pixel inside the source.
    @Test func translucentRotationMatchesPillowInside() throws {
        let source = try Self.translucentSource()
        let ours = try #require(RotationTransformer(degrees: 30).transform(source, forKey: "k")).pixels
        let theirs = try CodersManager.shared.decode(try Fixture.data("alpha/golden-rotate-30.png")).pixels
        let (cosine, sine) = (cos(Double.pi / 6), sin(Double.pi / 6))
        let worst = Self.translucentDifference(ours, theirs) { x, y in
            let dx = Double(x) + 0.5 - Double(ours.width) / 2
            let dy = Double(y) + 0.5 - Double(ours.height) / 2
            let sourceX = cosine * dx - sine * dy + Double(source.pixelWidth) / 2
            let sourceY = sine * dx + cosine * dy + Double(source.pixelHeight) / 2
            return sourceX >= 1 && sourceY >= 1 && sourceX <= Double(source.pixelWidth - 1) && sourceY <= Double(source.pixelHeight - 1)
        }
        #expect(worst.alpha <= 1 && worst.visible <= 3 && worst.colourAboveHalf <= 3, "\(worst)")
    }

    struct Orientations: Decodable {
        struct Picture: Decodable { let width: Int, height: Int, rgb: [UInt8] }
        let pictures: [String: Picture]
        init(from decoder: any Decoder) throws { pictures = try decoder.singleValueContainer().decode([String: Picture].self) }
        func buffer(_ key: String) -> PixelBuffer {
            let picture = pictures[key]!
            var rgba: [UInt8] = []
            for index in stride(from: 0, to: picture.rgb.count, by: 3) { rgba += picture.rgb[index..<index + 3] + [255] }
            return PixelBuffer(width: picture.width, height: picture.height, premultipliedRGBA: rgba)
        }
    }

    @Test(arguments: ExifOrientation.allCases.filter { $0 != .up })
    func orientationMatchesPillowsExifTranspose(orientation: ExifOrientation) throws {
        let table = try JSONDecoder().decode(Orientations.self, from: try Fixture.data("transform/orientations.json"))
        let image = Image(pixels: table.buffer("source"), orientation: orientation)
        let upright = try #require(OrientationTransformer().transform(image, forKey: "k"))
        #expect(upright.orientation == .up)
        #expect(upright.pixels == table.buffer(String(orientation.rawValue)))
    }
}
