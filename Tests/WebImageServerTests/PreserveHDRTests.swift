import Foundation
import Testing
import WebImage
@testable import WebImageServer
import WebImageTestSupport

/// imgproxy's `preserve_hdr` and `IMGPROXY_PRESERVE_HDR`, after its own table
/// (`processing/colorspace_test.go`: `TestColorspace`, `TestDownscaleHDR`,
/// `TestPreserveHDROptionOverride`, `resize:fill:100:100/enlarge:1/format:F`): a 16-bit PNG stays
/// 16-bit as PNG when preserved and is 8-bit otherwise, as JPEG always, and an 8-bit one stays
/// 8-bit. The source is made by our 16-bit PNG encoder, which HighBitDepthTests checks against a
/// reader of its own.
@Suite("imgproxy preserve_hdr", .serialized)
struct PreserveHDRTests {
    /// A 160x120 16-bit RGB PNG with values between 8-bit levels.
    static func source() throws -> [UInt8] {
        let samples = (0..<(160 * 120 * 4)).map { index -> UInt16 in index % 4 == 3 ? 65535 : UInt16(truncatingIfNeeded: index &* 40503) }
        let image = Image(pixels: PixelBuffer(width: 160, height: 120, straightRGBA16: samples))
        return [UInt8](try CodersManager.shared.encode(image, as: .png))
    }

    /// Decoding that keeps 16 bits, to read results back.
    static let keeping: DecodeOptions = {
        var options = DecodeOptions()
        options.keepsHighBitDepth = true
        return options
    }()

    /// Opaque 16-bit RGBA samples of `pixels` pixels, between 8-bit levels, different for each
    /// `variant` (a page or frame).
    static func distinctSamples(pixels: Int, variant: Int) -> [UInt16] {
        (0..<(pixels * 4)).map { index in index % 4 == 3 ? 65535 : UInt16(truncatingIfNeeded: index &* 40503 &+ variant &* 4099) }
    }

    /// The result's bit depth: a PNG's IHDR (byte 24), an AVIF's as its decoder reports it; 8
    /// for another format.
    static func bitDepth(_ body: Data) throws -> Int {
        switch ImageFormat(sniffing: body) {
        case .png: Int(body[body.startIndex + 24])
        case .avif, .jpegXL, .tiff: try CodersManager.shared.decode(body).sourceColor?.bitDepth ?? 0
        default: 8
        }
    }

    /// The component count a JPEG's frame header (SOF0 or SOF2) states, nil without one.
    static func jpegComponents(_ body: Data) -> Int? {
        let bytes = [UInt8](body)
        var offset = 2
        while offset + 9 < bytes.count, bytes[offset] == 0xFF {
            if bytes[offset + 1] == 0xC0 || bytes[offset + 1] == 0xC2 { return Int(bytes[offset + 9]) }
            offset += 2 + Int(bytes[offset + 2]) << 8 + Int(bytes[offset + 3])
        }
        return nil
    }

    /// The bit depth of each case's result: `source` is "16" or "8", `options` follow the fill.
    func depths(preserving configured: Bool, _ cases: [(source: String, options: String, format: String)]) async throws -> [Int] {
        var configuration = ServerHarness.configuration()
        configuration.preserveHDR = configured
        configuration.watermark = WatermarkImage(source: .data(try Fixture.data("gradient-rgba.png")))
        let png = try Self.source()
        var depths: [Int] = []
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/16.png", .ok(png, contentType: "image/png"))
            harness.origin.route("/8.png", .ok([UInt8](try Fixture.data("gradient-rgba.png")), contentType: "image/png"))
            for (source, options, format) in cases {
                let answer = try await harness.get(harness.signedPlain("rs:fill:100:100/el:1/f:\(format)\(options)", "/\(source).png"))
                #expect(answer.status == 200, "\(options) \(format): \(answer.status)")
                let image = try CodersManager.shared.decode(answer.body)
                #expect(image.pixelWidth == 100 && image.pixelHeight == 100)
                depths.append(try Self.bitDepth(answer.body))
            }
        }
        return depths
    }

    @Test(
        "IMGPROXY_PRESERVE_HDR on: 16-bit PNG stays 16-bit as PNG, JPEG XL and TIFF, 12-bit as AVIF, is 8-bit as JPEG; an 8-bit PNG stays 8-bit"
    )
    func colorspace() async throws {
        let cases = [
            ("16", "", "png"), ("16", "", "avif"), ("16", "", "jxl"), ("16", "", "tiff"), ("16", "", "jpg"), ("8", "", "png"),
            ("8", "", "avif"),
        ]
        #expect(try await depths(preserving: true, cases) == [16, 12, 16, 16, 8, 8, 8])
        // TestWatermarkColorspace: an 8-bit mark over a 16-bit source keeps it 16-bit; blur and
        // sharpen keep it too.
        let marked = [("16", "/wm:0.5", "png"), ("8", "/wm:0.5", "png"), ("16", "/bl:2/sh:1", "png")]
        #expect(try await depths(preserving: true, marked) == [16, 8, 16])
    }

    @Test("TestColorspace's grey rows: a grey PNG or TIFF stays grey as PNG (B_W at 8 bits, GREY16 at 16), and 8-bit as JPEG")
    func greyStaysGrey() async throws {
        var configuration = ServerHarness.configuration()
        configuration.preserveHDR = true
        // PngSuite's basn0g08/basn0g16/basn4a16 and the TIFF fixtures' 8- and 16-bit min-is-black pages.
        let sources = [
            "gray8.png": "png-suite/gray8.png", "gray16.png": "png-suite/gray16.png", "graya16.png": "png-suite/graya16.png",
            "grey.tiff": "tiff/grey.tiff", "grey-16.tiff": "tiff/grey-16.tiff",
        ]
        try await ServerHarness.inProcess(configuration) { harness throws in
            for (name, fixture) in sources {
                harness.origin.route(
                    "/\(name)", .ok([UInt8](try Fixture.data(fixture)), contentType: name.hasSuffix("png") ? "image/png" : "image/tiff"))
            }
            // imgproxy's expected interpretations, as a PNG's IHDR states them: bit depth, colour
            // type (0 grey, 4 grey and alpha).
            let expected: [(String, Int, Int)] = [
                ("gray8.png", 8, 0), ("gray16.png", 16, 0), ("graya16.png", 16, 4), ("grey.tiff", 8, 0), ("grey-16.tiff", 16, 0),
            ]
            for (name, depth, colorType) in expected {
                let answer = try await harness.get(harness.signedPlain("rs:fill:100:100/el:1/f:png", "/\(name)"))
                #expect(answer.status == 200, "\(name): \(answer.text)")
                let ihdr = (Int(answer.body[answer.body.startIndex + 24]), Int(answer.body[answer.body.startIndex + 25]))
                #expect(ihdr == (depth, colorType), "\(name): \(ihdr)")
                // As JPEG: 8-bit, one grey component (B_W).
                let jpeg = try await harness.get(harness.signedPlain("rs:fill:100:100/el:1/f:jpg", "/\(name)"))
                #expect(jpeg.status == 200 && Self.jpegComponents(jpeg.body) == 1, "\(name)")
            }
            // Without preserve_hdr the 16-bit grey PNG is an 8-bit grey one.
            let reduced = try await harness.get(harness.signedPlain("rs:fill:100:100/el:1/ph:0/f:png", "/gray16.png"))
            #expect(Int(reduced.body[reduced.body.startIndex + 24]) == 8 && Int(reduced.body[reduced.body.startIndex + 25]) == 0)
        }
    }

    @Test("a 16-bit TIFF's pages keep 16 bits: page picks one, pages stacks them at 16 bits, exact as PNG")
    func tiffPages() async throws {
        var configuration = ServerHarness.configuration()
        configuration.preserveHDR = true
        // Three 7x5 pages of distinct 16-bit samples, written by our TIFF encoder (16-bit pages,
        // which HighBitDepthTests reads back with a reader written after TIFF 6.0).
        let pages = (0..<3).map { Self.distinctSamples(pixels: 7 * 5, variant: $0) }
        let frames = pages.map { ImageFrame(pixels: PixelBuffer(width: 7, height: 5, straightRGBA16: $0)) }
        let tiff = try CodersManager.shared.encode(Image(frames: frames, hasAlpha: false), as: .tiff)
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/pages.tiff", .ok([UInt8](tiff), contentType: "image/tiff"))
            let one = try await harness.get(harness.signedPlain("pg:1/f:png", "/pages.tiff"))
            #expect(one.status == 200, "\(one.text)")
            let page = try CodersManager.shared.decode(one.body, options: Self.keeping)
            #expect(try Self.bitDepth(one.body) == 16 && page.pixels.samples16 == pages[1])
            let stacked = try await harness.get(harness.signedPlain("pg:1/pgs:2/f:png", "/pages.tiff"))
            #expect(stacked.status == 200, "\(stacked.text)")
            let both = try CodersManager.shared.decode(stacked.body, options: Self.keeping)
            #expect(both.pixelWidth == 7 && both.pixelHeight == 10 && both.pixels.samples16 == pages[1] + pages[2])
        }
    }

    @Test("a 16-bit APNG: its first frame keeps 16 bits as PNG (a still result), and the animation is 8-bit as WebP")
    func animation() async throws {
        var configuration = ServerHarness.configuration()
        configuration.preserveHDR = true
        // Three 6x4 frames of distinct 16-bit samples, written by our 16-bit APNG encoder (which
        // HighBitDepthAnimationTests reads back with ffmpeg).
        let samples = (0..<3).map { Self.distinctSamples(pixels: 6 * 4, variant: $0) }
        let frames = samples.map { ImageFrame(pixels: PixelBuffer(width: 6, height: 4, straightRGBA16: $0), duration: .milliseconds(100)) }
        let apng = try CodersManager.shared.encode(Image(frames: frames, hasAlpha: false), as: .png)
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/anim.png", .ok([UInt8](apng), contentType: "image/png"))
            let still = try await harness.get(harness.signedPlain("f:png", "/anim.png"))
            #expect(still.status == 200, "\(still.text)")
            let first = try CodersManager.shared.decode(still.body, options: Self.keeping)
            #expect(try Self.bitDepth(still.body) == 16 && first.frames.count == 1 && first.pixels.samples16 == samples[0])
            let animated = try await harness.get(harness.signedPlain("f:webp", "/anim.png"))
            #expect(animated.status == 200, "\(animated.text)")
            #expect(try CodersManager.shared.decode(animated.body).frames.count == 3)
        }
    }

    @Test("off (the default): 8-bit; the URL's preserve_hdr overrides the variable both ways")
    func overrides() async throws {
        #expect(
            try await depths(preserving: false, [("16", "", "png"), ("16", "/ph:1", "png"), ("16", "/preserve_hdr:true", "png")]) == [
                8, 16, 16,
            ])
        #expect(try await depths(preserving: true, [("16", "/ph:0", "png"), ("16", "/preserve_hdr:f", "png")]) == [8, 8])
    }

    @Test("an 8-bit mark blends over 16-bit pixels on their scale (libvips' OVER, the mark's values times 257)")
    func watermarkBlend() {
        let base = PixelBuffer(width: 1, height: 1, straightRGBA16: [30000, 40000, 50000, 65535])
        let mark = PixelBuffer(width: 1, height: 1, straightRGBA: [255, 0, 0, 255])
        let blended = WatermarkTransformer.blend(mark, over: base, x: 0, y: 0, opacity: 0.5)
        // Red: (65535 x 0.5 + 30000 x 0.5) / 1 = 47767.5, rounded away from zero; the others halve.
        #expect(blended.isHighBitDepth && blended.pixel16(x: 0, y: 0) == (47768, 20000, 25000, 65535))
    }

    @Test("the variable, the flag, and the canonical options that key the result cache")
    func settings() throws {
        let key = ["IMGPROXY_KEY": "736563726574", "IMGPROXY_SALT": "68656C6C6F"]
        #expect(
            try ServeSettings(arguments: [], environment: key.merging(["IMGPROXY_PRESERVE_HDR": "true"]) { $1 }).configuration.preserveHDR)
        #expect(try ServeSettings(arguments: ["--preserve-hdr"], environment: key).configuration.preserveHDR)
        #expect(try !ServeSettings(arguments: [], environment: key).configuration.preserveHDR)
        let parsed = try OptionsParser().parse(["ph:1", "w:10"])
        #expect(parsed.preserveHDR && parsed.canonical.contains("ph:1"))
        #expect(!(try OptionsParser().parse(["ph:0"])).canonical.contains("ph"))
    }
}
