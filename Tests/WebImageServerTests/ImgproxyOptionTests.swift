import Crypto
import Foundation
import Testing
import WebImage
import WebImageTesting
@testable import WebImageServer
import WebImageTestSupport

/// imgproxy's security options, read from its source: `options/parser/apply.go`
/// (`applyMaxSrcResolutionOption` and its siblings: each first asks `IsSecurityOptionsAllowed`,
/// presets included; resolutions are megapixels stored as `int(f*1000000)`, frames above 0),
/// `options/parser/errors.go` (`newSecurityOptionsError`: 403) and `security/checker.go`
/// (`CheckDimensions`: with a frame resolution limit an animation is checked frame by frame,
/// else its frames together against the source resolution, where, as for the server's own limit,
/// the first frames that fit are kept rather than the source refused).
@Suite("imgproxy security options", .serialized)
struct ImgproxySecurityOptionsTests {
    static let names = ["msr:1", "msfs:1000", "maf:2", "mafr:1", "mrd:100", "max_src_resolution:1", "max_result_dimension:10"]

    @Test("without IMGPROXY_ALLOW_SECURITY_OPTIONS each one answers 403, in a preset too")
    func refusedByDefault() throws {
        let parser = OptionsParser(presets: ["loose": "msr:100"])
        for option in Self.names {
            #expect(throws: ProxyError(status: 403, "security options (\(option.split(separator: ":")[0])) are not allowed on this server"))
            {
                try parser.parse([Substring(option)])
            }
        }
        #expect(throws: ProxyError.self) { try parser.parse(["pr:loose"]) }
        #expect(try parser.parse(["w:10"]).security == ProcessingOptions.SecurityLimits())
    }

    @Test("allowed, they are read as imgproxy reads them and change the result's key")
    func parsed() throws {
        let parser = OptionsParser(allowsSecurityOptions: true)
        let options = try parser.parse(["msr:1.5", "msfs:1000", "maf:3", "mafr:0.25", "mrd:100"])
        #expect(options.security.sourcePixels == 1_500_000)
        #expect(options.security.sourceBytes == 1000)
        #expect(options.security.animationFrames == 3)
        #expect(options.security.animationFramePixels == 250_000)
        #expect(options.security.resultDimension == 100)
        #expect(options.canonical != (try parser.parse(["w:0"])).canonical)
        for bad in ["maf:0", "msr:-1", "msfs:x", "mrd:1:2", "msr"] {
            #expect(throws: ProxyError.self, "\(bad)") { try parser.parse([Substring(bad)]) }
        }
        // A box over the URL's own result limit is not refused: the result is scaled to fit it.
        let limited = try parser.parse(["mrd:50", "w:60", "el:1"])
        let plan = try ProcessingPlan(
            options: limited, sourceWidth: 100, sourceHeight: 100, limits: ProcessingPlan.Limits(maximumDimension: 50))
        #expect(plan.resultWidth == 50 && plan.resultHeight == 50)
    }

    @Test("msr and msfs refuse a source over the URL's limits; mrd scales the result down")
    func sourceLimits() async throws {
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))  // 64x48: 3,072 pixels
        var configuration = ServerHarness.configuration()
        configuration.allowsSecurityOptions = true
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            #expect(try await harness.get(harness.signedPlain("msr:0.003", "/a.jpg")).status == 422, "3,072 > 3,000 pixels")
            #expect(try await harness.get(harness.signedPlain("msr:0.0031", "/a.jpg")).status == 200)
            let small = try await harness.get(harness.signedPlain("msfs:\(jpeg.count - 1)", "/a.jpg"))
            #expect(small.status == 422 && String(decoding: small.body, as: UTF8.self).contains("max_src_file_size"))
            #expect(try await harness.get(harness.signedPlain("msfs:\(jpeg.count)", "/a.jpg")).status == 200)
            let bounded = try await harness.get(harness.signedPlain("mrd:32", "/a.jpg", extension: "png"))
            let header = try ImageHeader(data: bounded.body)
            #expect(bounded.status == 200 && header.width == 32 && header.height == 24, "scaled as a whole to 32 a side")
        }
    }

    @Test("maf keeps the first frames; mafr checks an animation frame by frame instead of whole")
    func animationLimits() async throws {
        let animation = [UInt8](try Fixture.data("animated.gif"))  // 3 frames of 32x24: 768 pixels each, 2,304 in all
        var configuration = ServerHarness.configuration()
        configuration.allowsSecurityOptions = true
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/a.gif", .ok(animation, contentType: "image/gif"))
            let still = try await harness.get(harness.signedPlain("maf:1", "/a.gif"))
            #expect(try still.status == 200 && CodersManager.shared.decode(still.body).frames.count == 1)
            // As the server's own source limit: the first frames that fit are kept (2 x 768 of 2,000).
            let cut = try await harness.get(harness.signedPlain("msr:0.002", "/a.gif"))
            #expect(try cut.status == 200 && CodersManager.shared.decode(cut.body).frames.count == 2)
            #expect(try await harness.get(harness.signedPlain("msr:0.0005", "/a.gif")).status == 422, "one frame of 768 > 500")
            let perFrame = try await harness.get(harness.signedPlain("msr:0.002/mafr:0.001", "/a.gif"))
            #expect(try perFrame.status == 200 && CodersManager.shared.decode(perFrame.body).frames.count == 3, "768 ≤ 1,000 a frame")
            #expect(try await harness.get(harness.signedPlain("msr:0.002/mafr:0.0005", "/a.gif")).status == 422, "768 > 500 a frame")
        }
    }
}

/// `skip_processing` and `raw`, from imgproxy's `processing/processing.go`
/// (`shouldSkipStandardProcessing`: a source in a listed format, `IMGPROXY_SKIP_PROCESSING_FORMATS`
/// or the URL's `skp`, is answered as it is when the URL names no format or the source's own) and
/// `handlers/processing/handler.go` (`raw`: the source streamed, no processing).
@Suite("imgproxy skip_processing and raw", .serialized)
struct ImgproxySkipProcessingTests {
    let jpeg: [UInt8]

    init() throws {
        jpeg = [UInt8](try Fixture.data("gradient.jpg"))
    }

    @Test("skp names formats as imgproxy does, adds to the server's list and changes the key")
    func parsed() throws {
        var base = ProcessingOptions()
        base.skipProcessing = [.gif]
        let options = try OptionsParser(baseOptions: base).parse(["skp:jpg:webp"])
        #expect(options.skipProcessing == [.gif, .jpeg, .webP])
        #expect(options.canonical.contains("skp:gif:jpeg:webp"))
        #expect(throws: ProxyError.self) { try OptionsParser().parse(["skp:bogus"]) }
        #expect(try OptionsParser().parse(["raw:1"]).raw)
        #expect(throws: ProxyError.self) { try OptionsParser().parse(["raw:maybe"]) }
    }

    @Test("a listed source format is answered byte for byte, unless the URL asks for another format")
    func skipped() async throws {
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let kept = try await harness.get(harness.signedPlain("w:10/skp:jpg", "/a.jpg"))
            #expect(kept.status == 200 && kept.header("Content-Type") == "image/jpeg" && [UInt8](kept.body) == jpeg)
            let same = try await harness.get(harness.signedPlain("w:10/skp:jpg", "/a.jpg", extension: "jpg"))
            #expect([UInt8](same.body) == jpeg, "the source's own format named")
            let converted = try await harness.get(harness.signedPlain("w:10/skp:jpg", "/a.jpg", extension: "png"))
            #expect(try converted.header("Content-Type") == "image/png" && ImageHeader(data: converted.body).width == 10)
            let otherFormat = try await harness.get(harness.signedPlain("w:10/skp:png", "/a.jpg"))
            #expect(try [UInt8](otherFormat.body) != jpeg && ImageHeader(data: otherFormat.body).width == 10)
        }
        var configuration = ServerHarness.configuration()
        configuration.skipProcessingFormats = [.jpeg]
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            #expect(try await [UInt8](harness.get(harness.signedPlain("w:10", "/a.jpg")).body) == jpeg, "IMGPROXY_SKIP_PROCESSING_FORMATS")
        }
    }

    @Test("raw answers the source's bytes, typed by what they are, whatever the other options")
    func raw() async throws {
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "application/octet-stream"))
            let answer = try await harness.get(harness.signedPlain("raw:1/w:10/fn:photo", "/a.jpg", extension: "png"))
            #expect(answer.status == 200 && [UInt8](answer.body) == jpeg)
            #expect(answer.header("Content-Type") == "image/jpeg")
            #expect(answer.header("Content-Disposition") == "inline; filename=\"photo.jpg\"")
            #expect(try await harness.get(harness.signedPlain("raw:1", "/missing.jpg")).status == 404, "the source's 404")
        }
    }
}

/// `extend_aspect_ratio`, from imgproxy's `processing/prepare.go` (`calcSizes`: the image as it
/// comes out, the smaller of the scaled size and the result crop, grows on the side short of the
/// requested box's ratio, `imath.Scale` rounding; nothing without both sides) and
/// `processing/extend.go` (applied after `extend`, only when larger; `exar:1:GRAVITY`).
@Suite("imgproxy extend_aspect_ratio")
struct ImgproxyExtendAspectRatioTests {
    func plan(_ options: String, _ width: Int, _ height: Int) throws -> ProcessingPlan {
        try ProcessingPlan(options: OptionsParser().parse(options.split(separator: "/")), sourceWidth: width, sourceHeight: height)
    }

    @Test(
        "the canvas grows to the box's ratio on the short side",
        arguments: [
            ("rs:fit:200:200/exar:1", 400, 300, 200, 200),  // 200x150 out; 200 * 200/200 = 200 high
            ("rs:fit:400:300/exar:1", 100, 50, 100, 75),  // not enlarged: 100x50 out; 100 * 300/400 = 75
            ("rs:fit:300:100/exar:1", 100, 100, 300, 100),  // 100x100 out; 100 * 300/100 = 300 wide
            ("rs:fill:200:100/exar:1", 400, 300, 200, 100),  // the fill already has the ratio
            ("rs:fit:400:300:0:1/exar:1", 100, 50, 400, 300),  // extend first: already the ratio
            ("rs:fill-down:400:300/exar:1", 100, 50, 67, 50),  // fill-down cut 67x50: 67 * 300/400 = 50
            ("w:200/exar:1", 400, 300, 200, 150),  // one side: nothing
            ("rs:fit:200:200", 400, 300, 200, 150),
        ])
    func sizes(options: String, width: Int, height: Int, resultWidth: Int, resultHeight: Int) throws {
        let plan = try plan(options, width, height)
        #expect(plan.resultWidth == resultWidth && plan.resultHeight == resultHeight, "\(plan.resultWidth)x\(plan.resultHeight)")
    }

    @Test("the image sits by exar's gravity on the background; the option changes the key")
    func placed() async throws {
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))  // 64x48
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let north = try await harness.get(harness.signedPlain("rs:fit:64:64/exar:1:no/bg:ff0000", "/a.jpg", extension: "png"))
            let image = try CodersManager.shared.decode(north.body)
            #expect(image.pixelWidth == 64 && image.pixelHeight == 64)
            let pixels = try #require(image.frames.first).pixels
            let bottom = pixels.pixel(x: 32, y: 60)
            #expect(bottom == (255, 0, 0, 255), "the canvas below the image")
            #expect(pixels.pixel(x: 32, y: 2) != bottom, "the image at the top")
        }
        #expect(try OptionsParser().parse(["exar:1"]).canonical != (try OptionsParser().parse(["exar:0"])).canonical)
        #expect(throws: ProxyError.self) { try OptionsParser().parse(["exar:1:nowhere"]) }
    }
}

/// `trim`, from imgproxy's `options/parser/apply.go` (`applyTrimOption`: an empty threshold turns
/// it off; `RGBFromHex` colours, 3 or 6 digits), `vips/vips.c` (`vips_trim`: alpha flattened onto
/// magenta, the top-left pixel as background unless a colour is given, the equal-sides widening)
/// and libvips' `arithmetic/find_trim.c` (3x3 median, a channel differing by more than the
/// threshold, the first column and row with content from each side; all background: no cut).
@Suite("imgproxy trim")
struct ImgproxyTrimTests {
    /// 40x30 white with a red 10x8 rectangle at (12, 5) and, unless `speck` is false, one black
    /// pixel at (2, 2) that the median removes.
    static func picture(background: (UInt8, UInt8, UInt8, UInt8) = (255, 255, 255, 255), speck: Bool = true) -> PixelBuffer {
        var bytes: [UInt8] = []
        for y in 0..<30 {
            for x in 0..<40 {
                if (12..<22).contains(x), (5..<13).contains(y) {
                    bytes += [255, 0, 0, 255]
                } else if speck, x == 2, y == 2 {
                    bytes += [0, 0, 0, 255]
                } else {
                    bytes += [background.0, background.1, background.2, background.3]
                }
            }
        }
        return PixelBuffer(width: 40, height: 30, straightRGBA: bytes)
    }

    @Test("the content's box, the equal sides, a given colour, a threshold nothing passes, transparency")
    func boxes() {
        let picture = Self.picture()
        #expect(TrimFinder(threshold: 10).box(in: picture)! == (12, 5, 10, 8))
        // Margins 12 left and 18 right, 5 top and 17 bottom: the smaller cut on both sides.
        #expect(TrimFinder(threshold: 10, equalHorizontal: true).box(in: picture)! == (12, 5, 16, 8))
        #expect(TrimFinder(threshold: 10, equalVertical: true).box(in: picture)! == (12, 5, 10, 20))
        #expect(TrimFinder(threshold: 10, background: .white).box(in: picture)! == (12, 5, 10, 8))
        #expect(TrimFinder(threshold: 10, background: .black).box(in: picture) == nil, "all content: nothing cut")
        #expect(TrimFinder(threshold: 255).box(in: picture) == nil, "no difference is over 255")
        let clear = Self.picture(background: (0, 0, 0, 0), speck: false)
        #expect(TrimFinder(threshold: 10).box(in: clear)! == (12, 5, 10, 8), "transparent borders, flattened onto magenta")
    }

    @Test("t is read as imgproxy reads it; the result is planned from what the trim left")
    func served() async throws {
        let parser = OptionsParser()
        #expect(try parser.parse(["t:10"]).trim == ProcessingOptions.Trim(threshold: 10))
        #expect(try parser.parse(["t:10", "t:"]).trim == nil, "an empty threshold turns it off")
        #expect(try parser.parse(["t:5:f00:1"]).trim?.color == RGBAColor(red: 255, green: 0, blue: 0))
        #expect(try parser.parse(["bg:f00"]).background == RGBAColor(red: 255, green: 0, blue: 0), "3-digit hex, as RGBFromHex")
        for bad in ["t:10:zz", "t:-1", "t:1:ffffff:maybe", "t:1:2:3:4:5"] {
            #expect(throws: ProxyError.self, "\(bad)") { try parser.parse([Substring(bad)]) }
        }
        let png = [UInt8](try CodersManager.shared.encode(Image(pixels: Self.picture()), as: .png))
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.png", .ok(png, contentType: "image/png"))
            let trimmed = try await harness.get(harness.signedPlain("t:10", "/a.png", extension: "png"))
            let image = try CodersManager.shared.decode(trimmed.body)
            #expect(image.pixelWidth == 10 && image.pixelHeight == 8)
            #expect(image.frames[0].pixels.pixel(x: 0, y: 0) == (255, 0, 0, 255))
            let fitted = try ImageHeader(
                data: try await harness.get(harness.signedPlain("t:10/rs:fit:5:5", "/a.png", extension: "png")).body)
            #expect(fitted.width == 5 && fitted.height == 4, "10x8 fitted in 5x5")
        }
    }
}

/// `max_bytes`, from imgproxy's `processing/save_fit_bytes.go` (`saveImageToFitBytes`: from the
/// request's quality down, a quarter over three times the target, half over 1.5 times, else three
/// quarters, `imath.Scale` rounding, always at least one lower, kept at quality 10 or below) and
/// `processing/processing.go` (`saveImage`: only formats that take a quality).
@Suite("imgproxy max_bytes")
struct ImgproxyMaxBytesTests {
    @Test("the quality steps, worked from imgproxy's arithmetic")
    func steps() {
        #expect(ImageProcessor.qualityToFit(quality: 80, size: 4000, target: 1000) == 20, "over 3x: 80 * 0.25")
        #expect(ImageProcessor.qualityToFit(quality: 80, size: 2000, target: 1000) == 40, "over 1.5x: 80 * 0.5")
        #expect(ImageProcessor.qualityToFit(quality: 80, size: 1200, target: 1000) == 60, "else: 80 * 0.75")
        #expect(ImageProcessor.qualityToFit(quality: 11, size: 1200, target: 1000) == 8, "11 * 0.75 = 8.25")
        #expect(ImageProcessor.qualityToFit(quality: 10, size: 5000, target: 1000) == nil, "10 or below is kept")
        #expect(ImageProcessor.qualityToFit(quality: 80, size: 1000, target: 1000) == nil, "fits")
        #expect(ImageProcessor.qualityToFit(quality: 14, size: 4000, target: 1000) == 4, "14 * 0.25 = 3.5, rounded half away")
    }

    @Test("a JPEG is the q answer the search reaches; PNG has no quality and is unchanged")
    func served() async throws {
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            func size(_ quality: Int) async throws -> Int {
                try await harness.get(harness.signedPlain("q:\(quality)", "/a.jpg", extension: "jpg")).body.count
            }
            // The target: a little under the size at q:80, so that at least one step is taken.
            let target = try await size(80) - 1
            var quality = 80
            while let next = ImageProcessor.qualityToFit(quality: quality, size: try await size(quality), target: target) { quality = next }
            #expect(quality < 80)
            let fitted = try await harness.get(harness.signedPlain("mb:\(target)", "/a.jpg", extension: "jpg"))
            let expected = try await harness.get(harness.signedPlain("q:\(quality)", "/a.jpg", extension: "jpg"))
            #expect(fitted.status == 200 && fitted.body == expected.body && fitted.body.count <= target)
            let png = try await harness.get(harness.signedPlain("mb:10", "/a.jpg", extension: "png"))
            #expect(png.body == (try await harness.get(harness.signedPlain("w:0", "/a.jpg", extension: "png"))).body)
        }
        #expect(throws: ProxyError.self) { try OptionsParser().parse(["mb:-1"]) }
    }
}

/// `watermark`, from imgproxy's `options/parser/apply.go` (`applyWatermarkOption`: opacity 0-1
/// required, a position among the compass points and `re`, float offsets, a scale above 0),
/// `processing/watermark.go` (`prepareWatermark`: fitted with enlargement in `ScaleToEven(side,
/// scale)`; for `re` the offsets as padding split in halves and the tiles replicated from the
/// centre, `vips_replicate_go` in `vips/vips.c`; the URL's opacity times
/// `IMGPROXY_WATERMARK_OPACITY`), `processing/calc_position.go` (`calcPosition` with overflow) and
/// `vips_apply_watermark` (alpha times opacity, composited OVER).
@Suite("imgproxy watermark", .serialized)
struct ImgproxyWatermarkTests {
    static func plain(_ width: Int, _ height: Int, _ rgba: [UInt8]) throws -> [UInt8] {
        let bytes = [UInt8]((0..<(width * height)).flatMap { _ in rgba })
        return [UInt8](
            try CodersManager.shared.encode(Image(pixels: PixelBuffer(width: width, height: height, straightRGBA: bytes)), as: .png))
    }

    func placing(_ options: String) throws -> ProcessingOptions.Watermark {
        try #require(try OptionsParser().parse([Substring(options)]).watermark)
    }

    @Test("positions as calcPosition computes them: the centre rounded half to even, edges, offsets, overflow kept one pixel in")
    func positions() throws {
        let mark = Image(pixels: PixelBuffer(width: 16, height: 8, straightRGBA: [UInt8](repeating: 255, count: 16 * 8 * 4)))
        func place(_ options: String, dpr: Double = 1) throws -> (x: Int, y: Int) {
            WatermarkTransformer(mark: mark, options: try placing(options), opacity: 1, offsetScale: dpr, maximumPixels: 1 << 26)
                .position(outerWidth: 64, outerHeight: 48, innerWidth: 16, innerHeight: 8)
        }
        #expect(try place("wm:1:ce") == (24, 20), "(64-16+1)/2 = 24.5 and (48-8+1)/2 = 20.5, to even")
        #expect(try place("wm:1:no") == (24, 0))
        #expect(try place("wm:1:soea:2:3") == (46, 37), "64-16-2, 48-8-3")
        #expect(try place("wm:1:soea:2:3", dpr: 2) == (44, 34), "pixel offsets times the dpr")
        #expect(try place("wm:1:we:0.25:0") == (16, 20), "below 1: a share of the width")
        #expect(try place("wm:1:ea:-100") == (63, 20), "outside: kept one pixel in")
        for bad in ["wm:", "wm:2", "wm:1:sm", "wm:1:fp", "wm:1:ce:0:0:0", "wm:1:ce:x"] {
            #expect(throws: ProxyError.self, "\(bad)") { try OptionsParser().parse([Substring(bad)]) }
        }
    }

    @Test("laid at its place, scaled, tiled, at the opacity; nothing without a configured watermark")
    func served() async throws {
        let white = try Self.plain(64, 48, [255, 255, 255, 255])
        let red = try Self.plain(8, 8, [255, 0, 0, 255])
        var configuration = ServerHarness.configuration()
        configuration.watermark = WatermarkImage(source: .data(Data(red)))
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/a.png", .ok(white, contentType: "image/png"))
            func pixels(_ options: String) async throws -> PixelBuffer {
                let answer = try await harness.get(harness.signedPlain(options, "/a.png", extension: "png"))
                #expect(answer.status == 200, "\(options)")
                return try CodersManager.shared.decode(answer.body).frames[0].pixels
            }
            let corner = try await pixels("wm:1:nowe")
            #expect(corner.pixel(x: 7, y: 7) == (255, 0, 0, 255) && corner.pixel(x: 8, y: 8) == (255, 255, 255, 255))
            // 8x8 fitted in 32x24 (half of 64x48): 24x24, centred at (20, 12).
            let scaled = try await pixels("wm:1:ce:0:0:0.5")
            #expect(scaled.pixel(x: 20, y: 12) == (255, 0, 0, 255) && scaled.pixel(x: 43, y: 35) == (255, 0, 0, 255))
            #expect(scaled.pixel(x: 19, y: 12) == (255, 255, 255, 255) && scaled.pixel(x: 44, y: 35) == (255, 255, 255, 255))
            // Tiles of 16x8 (8 px of space split 4 and 4), 5 across and 7 down, cut from the centre:
            // the layer's x is the tile's (x + 8) % 16, red in 4..<12.
            let tiled = try await pixels("wm:1:re:8:0")
            #expect(tiled.pixel(x: 0, y: 0) == (255, 0, 0, 255) && tiled.pixel(x: 12, y: 30) == (255, 0, 0, 255))
            #expect(tiled.pixel(x: 4, y: 0) == (255, 255, 255, 255) && tiled.pixel(x: 11, y: 47) == (255, 255, 255, 255))
            let half = try await pixels("wm:0.5:nowe")
            #expect(half.pixel(x: 0, y: 0) == (255, 128, 128, 255), "255 * 0.5 + 255 * 0.5 over white; 127.5 rounded")
        }
        configuration.watermark = WatermarkImage(source: .data(Data(red)), opacity: 0.5)
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/a.png", .ok(white, contentType: "image/png"))
            let answer = try await harness.get(harness.signedPlain("wm:1:nowe", "/a.png", extension: "png"))
            #expect(try CodersManager.shared.decode(answer.body).frames[0].pixels.pixel(x: 0, y: 0) == (255, 128, 128, 255))
        }
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.png", .ok(white, contentType: "image/png"))
            let marked = try await harness.get(harness.signedPlain("wm:1:nowe", "/a.png", extension: "png"))
            #expect(try CodersManager.shared.decode(marked.body).frames[0].pixels.pixel(x: 0, y: 0) == (255, 255, 255, 255))
        }
    }
}

/// `rotate`, `flip` and `auto_rotate`, from imgproxy's `processing/rotate_and_flip.go` (the EXIF
/// orientation first, then the URL's clockwise rotation, then its flips) and `prepare.go`
/// (`angleFlip`: no EXIF orientation with `ar:0`).
@Suite("imgproxy rotate, flip and auto_rotate")
struct ImgproxyGeometryTests {
    @Test("rot turns clockwise, fl mirrors after it, ar:0 keeps the stored orientation")
    func geometry() async throws {
        let redBlue = [UInt8](
            try CodersManager.shared.encode(
                Image(pixels: PixelBuffer(width: 2, height: 1, straightRGBA: [255, 0, 0, 255, 0, 0, 255, 255])), as: .png))
        let oriented = [UInt8](try Fixture.data("oriented-right.jpg"))  // stored 64x48, EXIF orientation 6
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/rb.png", .ok(redBlue, contentType: "image/png"))
            harness.origin.route("/o.jpg", .ok(oriented, contentType: "image/jpeg"))
            func pixels(_ options: String, _ path: String = "/rb.png") async throws -> PixelBuffer {
                try CodersManager.shared.decode(try await harness.get(harness.signedPlain(options, path, extension: "png")).body).frames[0]
                    .pixels
            }
            let turned = try await pixels("rot:90")
            #expect(turned.width == 1 && turned.height == 2)
            #expect(
                turned.pixel(x: 0, y: 0) == (255, 0, 0, 255) && turned.pixel(x: 0, y: 1) == (0, 0, 255, 255),
                "the left pixel goes to the top")
            let mirrored = try await pixels("fl:1")
            #expect(mirrored.pixel(x: 0, y: 0) == (0, 0, 255, 255))
            let turnedThenMirrored = try await pixels("rot:90/fl:0:1")
            #expect(turnedThenMirrored.pixel(x: 0, y: 0) == (0, 0, 255, 255), "the flip after the rotation")
            let upright = try await pixels("w:0", "/o.jpg")
            let stored = try await pixels("ar:0", "/o.jpg")
            #expect((upright.width, upright.height) == (48, 64) && (stored.width, stored.height) == (64, 48))
        }
    }
}

/// docs/imgproxy-options.md against the code: every option name the parser's table takes has a
/// row, a row the parser does not take says "not yet", and every test a row names exists.
@Suite("docs/imgproxy-options.md")
struct ImgproxyOptionsDocumentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("every option has a row, each row's names parse (or say not yet), each named test exists")
    func documented() throws {
        let whole = try String(contentsOf: Self.root.appendingPathComponent("docs/imgproxy-options.md"), encoding: .utf8)
        let otherTests = try #require(whole.range(of: "## imgproxy's other tests"))
        let document = whole[..<otherTests.lowerBound]
        let rows = document.split(separator: "\n").filter { $0.hasPrefix("| `") }
        var documentedNames: Set<String> = []
        let tests = try Self.testFunctions()
        // The section on imgproxy's other test files: each suite it names holds tests here.
        let otherSuites = whole[otherTests.upperBound...].split(separator: "`").map(String.init).filter {
            $0.hasPrefix("Imgproxy") && $0.hasSuffix("Tests")
        }
        #expect(otherSuites.count >= 5)
        for suite in otherSuites { #expect(tests.contains { $0.hasPrefix(suite + ".") }, "other tests: suite \(suite)") }
        for row in rows {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let names = cells[0].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map {
                String($0.element)
            }
            documentedNames.formUnion(names)
            let supported = !cells[2].hasPrefix("not yet")
            for name in names {
                let accepted = Self.accepted(name)
                #expect(accepted == supported, "\(name): the parser \(accepted ? "takes" : "refuses") it")
            }
            let test = cells[3].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            #expect(supported ? tests.contains(test) : test == "none", "\(names[0]): test \(test)")
            // The ported imgproxy tests: each suite named holds tests here.
            let ported = cells[4].split(separator: "`").map(String.init).filter { $0.hasPrefix("Imgproxy") && $0.hasSuffix("Tests") }
            #expect(cells[4] == "none" || cells[4].hasPrefix("none that can hold: ") || !ported.isEmpty, "\(names[0]): \(cells[4])")
            for suite in ported { #expect(tests.contains { $0.hasPrefix(suite + ".") }, "\(names[0]): suite \(suite)") }
        }
        // Every name the parser's table knows has a row here.
        let parserNames = ProcessingOption.byName.keys.sorted()
        #expect(parserNames.count > 60)
        for name in parserNames { #expect(documentedNames.contains(name), "\(name) has no row") }
    }

    /// Whether the parser knows `name` (another mistake in its arguments still means it does).
    static func accepted(_ name: String) -> Bool {
        do {
            _ = try OptionsParser(presets: ["p": "w:1"], allowsSecurityOptions: true).parse([Substring("\(name):1")])
            return true
        } catch {
            return !error.reason.hasPrefix("unknown option")
        }
    }

    /// `Suite.function` for every test function in the package's test targets.
    static func testFunctions() throws -> Set<String> {
        let tests = root.appendingPathComponent("Tests")
        var names: Set<String> = []
        // Every Swift file under a test target, in its folders too (ImgproxyTables/).
        let files = try FileManager.default.contentsOfDirectory(atPath: tests.path).filter { $0.hasSuffix("Tests") }.flatMap { target in
            let folder = tests.appendingPathComponent(target)
            return (FileManager.default.subpaths(atPath: folder.path) ?? []).filter { $0.hasSuffix(".swift") }.map {
                folder.appendingPathComponent($0)
            }
        }
        for file in files {
            var suite = ""
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                // A suite is a type at the top level; a type nested in one (a table's row) is not.
                if line.hasPrefix("struct ") { suite = String(trimmed.dropFirst(7).prefix { $0.isLetter || $0.isNumber }) }
                if trimmed.hasPrefix("func ") { names.insert(suite + "." + trimmed.dropFirst(5).prefix { $0.isLetter || $0.isNumber }) }
            }
        }
        return names
    }
}

/// `IMGPROXY_LOCAL_FILESYSTEM_ROOT`: imgproxy's `storage/fs` reads `local:///PATH` through Go's
/// `http.Dir`, which cleans the path as a rooted one (`..` stops at the root); the source URL is
/// percent-decoded first (`options/parser/url.go`), so encoded dots and slashes are cleaned too.
/// A link leading out of the root is refused here (imgproxy does not check it).
@Suite("imgproxy local:// sources", .serialized)
struct LocalFilesystemRootTests {
    @Test("paths are cleaned as rooted ones")
    func cleaning() {
        #expect(LocalFileSource.cleaned("/a/./b//c") == "a/b/c")
        #expect(LocalFileSource.cleaned("/../../etc/passwd") == "etc/passwd")
        #expect(LocalFileSource.cleaned("/a/../../b") == "b")
        #expect(LocalFileSource.cleaned("/..") == "")
    }

    @Test("files under the root are served; dots, encoded dots, base64 and links cannot leave it")
    func confined() async throws {
        let outer = try TemporaryDirectory()
        let root = outer.url.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
        let png = try CodersManager.shared.encode(
            Image(pixels: PixelBuffer(width: 4, height: 3, straightRGBA: [UInt8](repeating: 200, count: 48))), as: .png)
        try png.write(to: root.appendingPathComponent("a.png"))
        try png.write(to: root.appendingPathComponent("sub/b.png"))
        try png.write(to: outer.url.appendingPathComponent("secret.png"))
        try FileManager.default.createSymbolicLink(atPath: root.path + "/out.png", withDestinationPath: outer.url.path + "/secret.png")
        try FileManager.default.createSymbolicLink(atPath: root.path + "/in.png", withDestinationPath: root.path + "/sub/b.png")
        try FileManager.default.createSymbolicLink(atPath: root.path + "/up", withDestinationPath: outer.url.path)
        var configuration = ServerHarness.configuration()
        configuration.localFilesystemRoot = root.path
        try await ServerHarness.inProcess(configuration) { harness throws in
            func status(_ source: String) async throws -> Int {
                try await harness.get(harness.signer.sign("/w:2/plain/\(source)@png")).status
            }
            #expect(try await status("local:///a.png") == 200)
            #expect(try await status("local:///sub/../a.png") == 200)
            #expect(try await status("local:///in.png") == 200, "a link to a file inside the root")
            #expect(try await status("local:///../secret.png") == 404, "cleaned to the root's /secret.png, which does not exist")
            #expect(try await status("local:///%2e%2e%2fsecret.png") == 404, "encoded dots and slash, decoded then cleaned")
            #expect(try await status("local:///sub/%2E%2E/%2E%2E/secret.png") == 404)
            let encoded = URLSigner.base64URL(Array("local:///../../secret.png".utf8))
            #expect(try await harness.get(harness.signer.sign("/w:2/\(encoded).png")).status == 404, "base64 sources too")
            #expect(try await status("local:///out.png") == 404, "a link to a file outside the root")
            #expect(try await status("local:///up/secret.png") == 404, "a link to a folder outside the root")
            #expect(try await status("local:///sub") == 404, "a folder")
            #expect(try await status("local:///missing.png") == 404)
        }
        configuration.allowedSources = ["http://127.0.0.1/", "local:///sub/"]
        try await ServerHarness.inProcess(configuration) { harness throws in
            #expect(try await harness.get(harness.signer.sign("/w:2/plain/local:///sub/b.png@png")).status == 200)
            #expect(try await harness.get(harness.signer.sign("/w:2/plain/local:///a.png@png")).status == 404, "not under local:///sub/")
            #expect(
                try await harness.get(harness.signer.sign("/w:2/plain/local:///sub/../a.png@png")).status == 404, "judged after cleaning")
        }
        configuration.localFilesystemRoot = nil
        configuration.allowedSources = []
        try await ServerHarness.inProcess(configuration) { harness throws in
            #expect(try await harness.get(harness.signer.sign("/w:2/plain/local:///a.png@png")).status == 404, "no root, no local files")
        }
    }
}

/// Gravity as imgproxy places things (`processing/calc_position.go`, `calcPosition` without
/// overflow for crops, fills and extensions): the centre at `ShrinkToEven(outer - inner + 1, 2)`,
/// a focus point at `ScaleToEven(outer, x) - inner / 2`, offsets pixels times the dpr from 1 up
/// and shares below 1, towards the centre from an edge; and its arguments (`parseGravity`:
/// compass offsets of either sign, a focus point's shares in 0...1).
@Suite("imgproxy gravity")
struct ImgproxyGravityTests {
    @Test("placements worked from calcPosition")
    func placements() {
        func place(_ gravity: Gravity, _ inner: Int, _ outer: Int, dpr: Double = 1) -> Int {
            gravity.origin(width: inner, height: inner, outerWidth: outer, outerHeight: outer, dpr: dpr).x
        }
        #expect(place(.center, 300, 450) == 76, "(450 - 300 + 1) / 2 = 75.5, to even 76")
        #expect(place(.center, 300, 451) == 76, "152 / 2")
        #expect(place(.center, 10, 21) == 6, "12 / 2")
        #expect(place(Gravity(.west, x: 10), 300, 450, dpr: 2) == 20, "pixels times the dpr")
        #expect(place(Gravity(.east, x: 0.1), 50, 100) == 40, "a share: 100 * 0.1 from the right edge")
        #expect(place(Gravity(.east, x: -5), 50, 100) == 50, "kept inside")
        #expect(place(Gravity(.center, x: -0.5), 50, 100) == 0, "25.5 to even 26, less 50, kept inside")
        #expect(place(Gravity(.focusPoint, x: 0.5, y: 0.5), 300, 451) == 76, "225.5 to even 226, less 150")
        #expect(place(Gravity(.focusPoint, x: 0, y: 0), 300, 451) == 0)
    }

    @Test("compass offsets of either sign and fractional; focus points in 0...1")
    func arguments() throws {
        let parser = OptionsParser()
        #expect(try parser.parse(["g:no:-10:0.5"]).gravity == Gravity(.north, x: -10, y: 0.5))
        #expect(throws: ProxyError.self) { try parser.parse(["g:fp:1.5:0.5"]) }
        #expect(throws: ProxyError.self) { try parser.parse(["g:sm:1"]) }
        let plan = try ProcessingPlan(options: parser.parse(["rs:fill:300:300"]), sourceWidth: 675, sourceHeight: 450)
        #expect(plan.fill == ProcessingPlan.Cut(width: 300, height: 300, gravity: .center) && plan.scaledWidth == 450)
    }
}

/// imgproxy's encoder settings (`vips/config.go`: `IMGPROXY_JPEG_PROGRESSIVE`, `_WEBP_EFFORT`
/// 1-6, `_AVIF_SPEED` 0-9, `_JXL_EFFORT` 1-9, `_PNG_INTERLACED`, `_PNG_QUANTIZE`,
/// `_PNG_QUANTIZATION_COLORS` 2-256; a value out of range stops the start; `vips/vips.c`
/// `vips_pngsave_go` for the palette's bit depth).
@Suite("imgproxy encoder settings", .serialized)
struct ImgproxyEncoderSettingsTests {
    @Test("each setting reaches the encoder: a progressive JPEG, other bytes at another effort or speed")
    func applied() async throws {
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))
        func bodies(_ settings: EncoderSettings) async throws -> [String: Data] {
            var configuration = ServerHarness.configuration()
            configuration.encoding = settings
            var bodies: [String: Data] = [:]
            try await ServerHarness.inProcess(configuration) { harness throws in
                harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
                for format in ["jpg", "webp", "avif", "jxl", "png"] {
                    let answer = try await harness.get(harness.signedPlain("w:32", "/a.jpg", extension: format))
                    #expect(answer.status == 200, "\(format)")
                    bodies[format] = answer.body
                }
            }
            return bodies
        }
        let defaults = try await bodies(EncoderSettings())
        var changed = EncoderSettings()
        changed.jpegProgressive = true
        changed.webPEffort = 1
        changed.avifSpeed = 9
        changed.jxlEffort = 1
        changed.pngInterlaced = true
        changed.pngQuantize = true
        changed.pngQuantizationColors = 12
        let other = try await bodies(changed)
        #expect(try ImageHeader(data: other["jpg"]!).isProgressive && !ImageHeader(data: defaults["jpg"]!).isProgressive)
        for format in ["webp", "avif", "jxl"] { #expect(other[format] != defaults[format], "\(format)") }
        // IHDR's bit depth, colour type and interlace method: 8-bit RGB, not interlaced, by
        // default; a 4-bit palette (12 colours: more than 4, at most 16), Adam7, when asked.
        let png = try #require(defaults["png"])
        let quantised = try #require(other["png"])
        #expect([png[24], png[25], png[28]] == [8, 2, 0] && [quantised[24], quantised[25], quantised[28]] == [4, 3, 1])
        #expect(PNGChunks.chunk("PLTE", in: quantised).map { $0.count / 3 } == 12)
    }

    @Test("PNG: a lower deflate level answers bigger files of the same pixels")
    func pngLevel() async throws {
        let png = [UInt8](try Fixture.data("gradient-rgba.png"))
        var bodies: [Data] = []
        for level in [0, 9] {
            var configuration = ServerHarness.configuration()
            configuration.encoding.pngCompressionLevel = level
            try await ServerHarness.inProcess(configuration) { harness throws in
                harness.origin.route("/a.png", .ok(png, contentType: "image/png"))
                let answer = try await harness.get(harness.signedPlain("w:40", "/a.png", extension: "png"))
                #expect(answer.status == 200)
                bodies.append(answer.body)
            }
        }
        #expect(bodies[0].count > bodies[1].count)
        let decoded = try bodies.map { try CodersManager.shared.decode($0).pixels }
        #expect(decoded[0] == decoded[1])
    }

    @Test("read from imgproxy's variables, within imgproxy's ranges")
    func ranges() throws {
        let key = ["IMGPROXY_KEY": "736563726574", "IMGPROXY_SALT": "68656C6C6F"]
        let settings = try ServeSettings(
            arguments: [],
            environment: key.merging([
                "IMGPROXY_JPEG_PROGRESSIVE": "true", "IMGPROXY_WEBP_EFFORT": "6", "IMGPROXY_AVIF_SPEED": "0",
                "IMGPROXY_PNG_INTERLACED": "true", "IMGPROXY_PNG_QUANTIZE": "1", "IMGPROXY_PNG_QUANTIZATION_COLORS": "64",
            ]) { $1 })
        #expect(settings.configuration.encoding.jpegProgressive && settings.configuration.encoding.webPEffort == 6)
        #expect(settings.configuration.encoding.avifSpeed == 0 && settings.configuration.encoding.jxlEffort == 7)
        let png = settings.configuration.encoding
        #expect(png.pngInterlaced && png.pngQuantize && png.pngQuantizationColors == 64 && png.pngCompressionLevel == 4)
        let flags = try ServeSettings(arguments: ["--png-compression", "2", "--png-quantization-colors", "2"], environment: key)
        #expect(flags.configuration.encoding.pngCompressionLevel == 2 && flags.configuration.encoding.pngQuantizationColors == 2)
        #expect(!flags.configuration.encoding.pngQuantize && !flags.configuration.encoding.pngInterlaced)
        for (name, value) in [
            ("IMGPROXY_WEBP_EFFORT", "7"), ("IMGPROXY_AVIF_SPEED", "10"), ("IMGPROXY_JXL_EFFORT", "0"),
            ("IMGPROXY_PNG_QUANTIZATION_COLORS", "1"), ("IMGPROXY_PNG_QUANTIZATION_COLORS", "257"), ("WEBIMAGE_PNG_COMPRESSION", "10"),
        ] {
            #expect(throws: (any Error).self, "\(name)=\(value)") {
                try ServeSettings(arguments: [], environment: key.merging([name: value]) { $1 })
            }
        }
    }
}

/// `/info`, imgproxy Pro's "Getting an image info" page (imgproxy-docs `usage/getting_info.mdx`):
/// `size`, `format`, `dimensions` and `exif` on by default, the pixel options (`average` with
/// transparent pixels left out by default, `blurhash:X:Y` of at most 9 by 9, `crop:W:H:GRAVITY`
/// as shares, `page`) off; signed as processing URLs. BlurHash as Wolt's specification computes
/// it (a solid red image with 1x1 components is `00TI:j`: size flag 0, no AC so maximum 0, the DC
/// 255 << 16 in four base-83 digits; the PyPI `blurhash` package gives the same).
@Suite("imgproxy /info", .serialized)
struct ImgproxyInfoTests {
    @Test("options, defaults and mistakes")
    func options() throws {
        let parser = OptionsParser()
        let defaults = try parser.parseInfo([])
        #expect(defaults.size && defaults.format && defaults.dimensions && defaults.exif && !defaults.decodes)
        let asked = try parser.parseInfo(["s:0", "avg:1:0", "bh:4:3", "c:0.5:0.5:nowe", "pg:1", "fr:1"])
        #expect(!asked.size && asked.average && !asked.averageIgnoresTransparent && asked.blurHash! == (4, 3) && asked.page == 1)
        #expect(asked.decodes && asked.canonical != defaults.canonical)
        #expect(throws: ProxyError.self) { try parser.parseInfo(["bh:10:1"]) }
        #expect(throws: ProxyError(status: 400, "unknown info option \"rs\"")) { try parser.parseInfo(["rs:fit:10:10"]) }
        #expect(throws: ProxyError(status: 403, "security options (msr) are not allowed on this server")) {
            try parser.parseInfo(["msr:1"])
        }
        #expect(throws: ProxyError.self) { try parser.parseInfo(["exp:1"]) }
        #expect(try OptionsParser(allowsSecurityOptions: true).parseInfo(["msr:2", "msfs:10"]).security.sourcePixels == 2_000_000)
    }

    @Test("BlurHash of a solid colour, worked from the specification")
    func blurHash() {
        let red = PixelBuffer(
            width: 4, height: 3,
            straightRGBA: [UInt8](repeating: 0, count: 48).enumerated().map { $0.offset % 4 == 1 || $0.offset % 4 == 2 ? 0 : 255 })
        #expect(BlurHash.encode(red, componentsX: 1, componentsY: 1) == "00TI:j")
        #expect(BlurHash.base83(16_711_680, length: 4) == "TI:j")
        #expect(BlurHash.encode(red, componentsX: 4, componentsY: 3).count == 1 + 1 + 4 + 2 * 11, "size, maximum, DC, 2 per AC component")
    }

    @Test("ThumbHash of an opaque gradient: the bytes PyPI's thumbhash 0.1.2 gives for the same pixels")
    func thumbHash() {
        var bytes: [UInt8] = []
        for y in 0..<4 { for x in 0..<5 { bytes += [UInt8(x * 50), UInt8(y * 60), 100, 255] } }
        // thumbhash.rgba_to_thumb_hash(5, 4, pixels), a port of the reference encoder.
        let expected: [UInt8] = [
            216, 23, 10, 54, 152, 112, 119, 120, 112, 135, 120, 135, 120, 120, 136, 120, 136, 120, 112, 128, 7, 247, 135,
        ]
        #expect(ThumbHash.encode(PixelBuffer(width: 5, height: 4, straightRGBA: bytes)) == expected)
        let translucent = ThumbHash.encode(
            PixelBuffer(width: 2, height: 2, straightRGBA: [255, 0, 0, 255, 0, 0, 0, 0, 255, 0, 0, 255, 0, 0, 0, 0]))
        #expect(translucent[2] & 0x80 != 0 && translucent.count > 6, "the alpha flag and the alpha byte")
    }

    @Test("the JSON of a source, cached with an ETag; pixel options on request; refusals")
    func served() async throws {
        let oriented = [UInt8](try Fixture.data("oriented-right.jpg"))
        let animation = [UInt8](try Fixture.data("animated.gif"))
        let half = [UInt8](
            try CodersManager.shared.encode(
                Image(pixels: PixelBuffer(width: 2, height: 1, straightRGBA: [10, 20, 30, 255, 0, 0, 0, 0])), as: .png))
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/o.jpg", .ok(oriented, contentType: "image/jpeg").tagged("\"o1\""))
            harness.origin.route("/a.gif", .ok(animation, contentType: "image/gif"))
            harness.origin.route("/h.png", .ok(half, contentType: "image/png"))
            func info(_ options: String, _ path: String) async throws -> ServerHarness.Answer {
                try await harness.get("/info" + harness.signedPlain(options, path))
            }
            let plain = try await info("cb:1", "/o.jpg")
            #expect(plain.status == 200 && plain.header("Content-Type") == "application/json")
            #expect(
                String(decoding: plain.body, as: UTF8.self)
                    == #"{"size": \#(oriented.count), "format": "jpeg", "width": 64, "height": 48, "orientation": 6, "exif": {"Image Orientation": "Rotated 90 CW"}}"#
            )
            let again = try await harness.get(
                "/info" + harness.signedPlain("cb:1", "/o.jpg"), headers: [("If-None-Match", plain.header("ETag") ?? "")])
            #expect(again.status == 304 && harness.origin.requestCount("/o.jpg") == 1, "cached")
            let frames = String(decoding: try await info("s:0/f:0/d:0/exif:0/fr:1", "/a.gif").body, as: UTF8.self)
            #expect(frames == #"{"frames": 3}"#)
            let average = String(decoding: try await info("s:0/f:0/d:0/avg:1/c:1:1:ea", "/h.png").body, as: UTF8.self)
            #expect(
                average
                    == #"{"crop": {"left": 0.5, "top": 0.0, "width": 0.5, "height": 1.0}, "average": {"R": 10, "G": 20, "B": 30, "A": 255}}"#
            )
            let withTransparent = String(decoding: try await info("s:0/f:0/d:0/avg:1:0", "/h.png").body, as: UTF8.self)
            #expect(
                withTransparent == #"{"average": {"R": 5, "G": 10, "B": 15, "A": 128}}"#, "(10 + 0) / 2 = 5; (255 + 0) / 2 = 127.5, rounded"
            )
            #expect(try await info("pg:5", "/a.gif").status == 400)
            // This server's colour description: a 12-bit PQ AVIF (Tests/WebImageCodecsTests/
            // hdr_reference.py's, made by avifenc -l -d 12 --cicp 9/16/0), then a JPEG.
            harness.origin.route("/pq.avif", .ok([UInt8](try Fixture.data("avif/pq-12-bit.avif")), contentType: "image/avif"))
            let hdr = String(decoding: try await info("s:0/f:0/d:0/exif:0/cd:1", "/pq.avif").body, as: UTF8.self)
            #expect(
                hdr
                    == #"{"color_description": {"bit_depth": 12, "primaries": "bt2020", "transfer": "pq", "matrix": 0, "hdr": true, "gain_map": false}}"#
            )
            // An Ultra HDR JPEG (UltraHDRFile: libultrahdr's gain map XMP): its gain map's values.
            let base = try CodersManager.shared.encode(
                Image(pixels: PixelBuffer(width: 8, height: 8, straightRGBA: [UInt8](repeating: 120, count: 256))), as: .jpeg)
            harness.origin.route("/u.jpg", .ok([UInt8](UltraHDRFile.make(base)), contentType: "image/jpeg"))
            let ultra = String(decoding: try await info("s:0/f:0/d:0/exif:0/cd:1", "/u.jpg").body, as: UTF8.self)
            #expect(
                ultra
                    == #"{"color_description": {"bit_depth": 8, "primaries": null, "transfer": null, "matrix": null, "hdr": false, "gain_map": true, "gain_map_metadata": {"gain_map_min": [0.0], "gain_map_max": [2.32193], "gamma": [1.0], "offset_sdr": [0.0], "offset_hdr": [0.0], "hdr_capacity_min": 0.0, "hdr_capacity_max": 2.32193, "base_rendition_is_hdr": false}}}"#
            )
            // An AVIF's ISO 21496-1 gain map (libavif's test file; GainMapHEIFTests says where its
            // values come from): an HDR base, so hdrgm's minimum is the negated maximum.
            let gainMapAVIF = try Fixture.data("gain-map/libavif/color_nogrid_alpha_nogrid_gainmap_grid.avif")
            harness.origin.route("/gm.avif", .ok([UInt8](gainMapAVIF), contentType: "image/avif"))
            let avif = String(decoding: try await info("s:0/f:0/d:0/exif:0/cd:1", "/gm.avif").body, as: UTF8.self)
            #expect(
                avif
                    == #"{"color_description": {"bit_depth": 10, "primaries": null, "transfer": "pq", "matrix": null, "hdr": true, "gain_map": true, "gain_map_metadata": {"gain_map_min": [-11.0, -6.0, -4.333333333333333], "gain_map_max": [1.0, 0.5, 0.3333333333333333], "gamma": [1.0, 0.5, 0.3333333333333333], "offset_sdr": [0.0, 0.02, 0.04], "offset_hdr": [0.0, 0.01, 0.02], "hdr_capacity_min": 0.0, "hdr_capacity_max": 3.0, "base_rendition_is_hdr": true}}}"#
            )
            let sdr = String(decoding: try await info("s:0/f:0/d:0/exif:0/color_description:1", "/o.jpg").body, as: UTF8.self)
            #expect(
                sdr
                    == #"{"color_description": {"bit_depth": 8, "primaries": null, "transfer": null, "matrix": null, "hdr": false, "gain_map": false}}"#
            )
            let unsigned = harness.signedPlain("cb:1", "/o.jpg").dropFirst().drop { $0 != "/" }
            #expect(try await harness.get("/info/bad" + unsigned).status == 403, "a wrong signature")
        }
    }
}

/// The paid edition's colour, page and hashsum options, from imgproxy's processing page
/// (imgproxy-docs `usage/processing.mdx`: `adjust`/`br`/`co`/`sa`, `monochrome` default
/// `0:b3b3b3`, `duotone` default `0:000000:ffffff`, `colorize:OPACITY:COLOR:KEEP_ALPHA`,
/// `background_alpha`, `page` ignored when the result animates, `disable_animation`, `hashsum`
/// answering 422 on a mismatch). imgproxy Pro's code is not public, so the pixel arithmetic is the
/// effect its page describes (``ColorFilterTransformer`` says which), checked here by hand.
@Suite("imgproxy paid-edition options", .serialized)
struct ImgproxyPaidOptionsTests {
    func filtered(_ options: String, _ pixel: [UInt8]) throws -> [UInt8] {
        let filters = try OptionsParser().parse(options.split(separator: "/")).colorFilters
        let image = Image(pixels: PixelBuffer(width: 1, height: 1, straightRGBA: pixel))
        return try #require(ColorFilterTransformer(options: filters).transform(image, forKey: "")).frames[0].pixels.bytes
    }

    @Test("the colour arithmetic")
    func colors() throws {
        #expect(try filtered("br:10", [100, 100, 100, 255]) == [110, 110, 110, 255])
        #expect(try filtered("co:2", [100, 200, 128, 255]) == [72, 255, 128, 255], "(100 - 128) * 2 + 128; 272 clipped")
        #expect(try filtered("sa:0", [255, 0, 0, 255]) == [76, 76, 76, 255], "luma 0.299 * 255 = 76.2")
        #expect(try filtered("a:10:1:0", [245, 0, 0, 255]) == [83, 83, 83, 255], "brightness first: luma of (255, 10, 10) is 83.3")
        #expect(try filtered("mc:1:ffffff", [255, 0, 0, 255]) == [76, 76, 76, 255])
        #expect(
            try filtered("mc:0.5:ff0000", [0, 0, 200, 255]) == [11, 0, 100, 255], "luma 22.8: half of (22.8, 0, 0) and half of (0, 0, 200)")
        #expect(try filtered("dt:1:000000:ffffff", [255, 0, 0, 255]) == [76, 76, 76, 255])
        #expect(try filtered("dt:1:ff0000:0000ff", [255, 255, 255, 255]) == [0, 0, 255, 255], "white takes the light colour")
        #expect(try filtered("col:0.5:ff0000", [0, 0, 255, 255]) == [128, 0, 128, 255])
        #expect(try filtered("col:0.5:ff0000", [0, 0, 0, 0]) == [128, 0, 0, 128], "the overlay makes transparent pixels half opaque")
        #expect(try filtered("col:0.5:ff0000:1", [0, 0, 0, 0])[3] == 0, "keep_alpha")
        for bad in ["br:300", "co:-1", "mc:2", "dt:0.5:zz", "col:1:ff0000:maybe", "hs:md6:00", "hs:md5:xyz", "bga:2"] {
            #expect(throws: ProxyError.self, "\(bad)") { try OptionsParser().parse([Substring(bad)]) }
        }
        #expect(try OptionsParser().parse(["a:1:2:3"]).canonical != (try OptionsParser().parse(["w:0"])).canonical)
    }

    @Test("hashsum, page, disable_animation and background_alpha through the server")
    func served() async throws {
        let colors: [[UInt8]] = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255]]
        let frames = colors.map {
            ImageFrame(
                pixels: PixelBuffer(width: 4, height: 4, straightRGBA: Array([[UInt8]](repeating: $0, count: 16).joined())),
                duration: .milliseconds(100))
        }
        let gif = [UInt8](try CodersManager.shared.encode(Image(frames: frames, hasAlpha: false), as: .gif))
        let clear = [UInt8](
            try CodersManager.shared.encode(
                Image(pixels: PixelBuffer(width: 2, height: 2, straightRGBA: [UInt8](repeating: 0, count: 16))), as: .png))
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.gif", .ok(gif, contentType: "image/gif"))
            harness.origin.route("/c.png", .ok(clear, contentType: "image/png"))
            func decoded(_ options: String, _ path: String, _ format: String) async throws -> Image {
                let answer = try await harness.get(harness.signedPlain(options, path, extension: format))
                #expect(answer.status == 200, "\(options)")
                return try CodersManager.shared.decode(answer.body)
            }
            let md5 = Insecure.MD5.hash(data: Data(gif)).map { String(format: "%02x", $0) }.joined()
            #expect(try await harness.get(harness.signedPlain("hs:md5:\(md5)", "/a.gif", extension: "png")).status == 200)
            #expect(
                try await harness.get(harness.signedPlain("hs:md5:\(String(md5.reversed()))", "/a.gif", extension: "png")).status == 422)
            let second = try await decoded("pg:1", "/a.gif", "png").frames[0].pixels.pixel(x: 0, y: 0)
            // The GIF encoder's palette holds 248 for 255: the colour is told by its channels.
            #expect(second.green > 200 && second.red < 50 && second.blue < 50, "the second page: \(second)")
            #expect(try await decoded("pg:1", "/a.gif", "gif").frames.count == 3, "ignored when the result animates")
            let still = try await decoded("da:1/pg:2", "/a.gif", "gif")
            let third = still.frames[0].pixels.pixel(x: 0, y: 0)
            #expect(still.frames.count == 1 && third.blue > 200 && third.red < 50 && third.green < 50, "the third page: \(third)")
            #expect(try await harness.get(harness.signedPlain("pg:3", "/a.gif", extension: "png")).status == 400)
            #expect(try await decoded("bg:ff0000/bga:0.5", "/c.png", "png").frames[0].pixels.pixel(x: 0, y: 0) == (255, 0, 0, 128))
        }
    }
}

/// The paid edition's watermark options (imgproxy-docs `usage/processing.mdx`): `watermark_url`
/// (URL-safe base64 of the image's URL), `watermark_size` (fit, enlarging, a 0 side following the
/// other, only without `wm`'s scale), `watermark_rotate` (clockwise).
@Suite("imgproxy watermark URL, size and rotation", .serialized)
struct ImgproxyWatermarkExtrasTests {
    @Test("wmu fetches the mark as a source; wms fits it; wmr turns it clockwise")
    func extras() async throws {
        let white = try ImgproxyWatermarkTests.plain(64, 48, [255, 255, 255, 255])
        let red = try ImgproxyWatermarkTests.plain(8, 8, [255, 0, 0, 255])
        var halves: [UInt8] = []
        for _ in 0..<4 {
            halves +=
                [255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255] + [
                    0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255, 255,
                ]
        }
        let redBlue = [UInt8](
            try CodersManager.shared.encode(Image(pixels: PixelBuffer(width: 8, height: 4, straightRGBA: halves)), as: .png))
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.png", .ok(white, contentType: "image/png"))
            harness.origin.route("/m.png", .ok(red, contentType: "image/png"))
            harness.origin.route("/rb.png", .ok(redBlue, contentType: "image/png"))
            func mark(_ path: String) -> String { URLSigner.base64URL(Array(harness.origin.url(path).absoluteString.utf8)) }
            func pixels(_ options: String) async throws -> PixelBuffer {
                let answer = try await harness.get(harness.signedPlain(options, "/a.png", extension: "png"))
                #expect(answer.status == 200, "\(options): \(String(decoding: answer.body, as: UTF8.self))")
                return try CodersManager.shared.decode(answer.body).frames[0].pixels
            }
            let fetched = try await pixels("wm:1:nowe/wmu:\(mark("/m.png"))")
            #expect(fetched.pixel(x: 7, y: 7) == (255, 0, 0, 255) && fetched.pixel(x: 8, y: 8) == (255, 255, 255, 255))
            // A mark scaled past the result's pixel limit (8192 x 8192 by default) is refused, not allocated.
            let huge = try await harness.get(
                harness.signedPlain("wmu:\(mark("/m.png"))/wms:90000:90000/wm:1:nowe", "/a.png", extension: "png"))
            #expect(huge.status == 422, "\(huge.status): \(huge.text)")
            let sized = try await pixels("wmu:\(mark("/m.png"))/wms:16:0/wm:1:nowe")
            #expect(
                sized.pixel(x: 15, y: 15) == (255, 0, 0, 255) && sized.pixel(x: 16, y: 16) == (255, 255, 255, 255), "8x8 fitted to 16 wide")
            let turned = try await pixels("wm:1:nowe/wmu:\(mark("/rb.png"))/wmr:90")
            #expect(turned.pixel(x: 1, y: 0) == (255, 0, 0, 255) && turned.pixel(x: 1, y: 7) == (0, 0, 255, 255), "the left half on top")
            #expect(turned.pixel(x: 4, y: 1) == (255, 255, 255, 255), "4 wide once turned")
            let plainAnswer = try await harness.get(harness.signedPlain("wmu:\(mark("/m.png"))", "/a.png", extension: "png"))
            #expect(
                try CodersManager.shared.decode(plainAnswer.body).frames[0].pixels.pixel(x: 0, y: 0) == (255, 255, 255, 255),
                "no wm, no mark")
        }
        #expect(throws: ProxyError.self) { try OptionsParser().parse(["wmu:%%%"]) }
        #expect(throws: ProxyError.self) { try OptionsParser().parse(["wmu:" + URLSigner.base64URL(Array("file:///etc/passwd".utf8))]) }
    }
}

/// `IMGPROXY_SET_CANONICAL_HEADER`: imgproxy's `server/responsewriter/writer.go` (`SetCanonical`)
/// sets `Link: <URL>; rel="canonical"` for http(s) sources when the setting is on.
@Suite("imgproxy canonical header", .serialized)
struct CanonicalHeaderTests {
    @Test("the source named in Link, on a miss, on a cached answer and on raw; nothing when off")
    func canonical() async throws {
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))
        var configuration = ServerHarness.configuration()
        configuration.setsCanonicalHeader = true
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let expected = "<\(harness.origin.url("/a.jpg").absoluteString)>; rel=\"canonical\""
            for options in ["w:10", "w:10", "raw:1"] {
                let answer = try await harness.get(harness.signedPlain(options, "/a.jpg"))
                #expect(answer.status == 200 && answer.header("Link") == expected, "\(options): \(answer.header("Link") ?? "none")")
            }
        }
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            #expect(try await harness.get(harness.signedPlain("w:10", "/a.jpg")).header("Link") == nil)
        }
    }
}
