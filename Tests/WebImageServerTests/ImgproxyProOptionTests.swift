import Foundation
import Testing
import WebImage
import WebImageTesting
@testable import WebImageCodecs
@testable import WebImageServer
import WebImageTestSupport

/// `resizing_algorithm`, `crop_aspect_ratio`, `unsharp_masking`, `autoquality`, `format:best` and
/// `pages` from imgproxy Pro's processing page (imgproxy-docs `usage/processing.mdx`, and
/// `features/autoquality.mdx`, `features/best_format.mdx`), and the open-source `keep_copyright`,
/// `enforce_thumbnail` and `preserve_hdr` (imgproxy's `options/parser/apply.go`,
/// `processing/strip_metadata.go` and `vips/vips.c` `vips_strip`). Pro's code is not public: where
/// its page leaves the arithmetic open, the value here is worked by hand from what the type in
/// the server says it does.
@Suite("imgproxy Pro options: resizing, crop ratio, unsharp masking, autoquality, best format, pages", .serialized)
struct ImgproxyProOptionsTests {
    func options(_ text: String) throws(ProxyError) -> ProcessingOptions {
        try OptionsParser().parse(text.split(separator: "/"))
    }

    @Test("ra takes imgproxy's five names; the kernels' weights are the textbook ones")
    func resizingAlgorithms() throws {
        let names: [(String, ResamplingFilter)] = [
            ("nearest", .nearest), ("linear", .bilinear), ("cubic", .bicubic), ("lanczos2", .lanczos2), ("lanczos3", .lanczos3),
        ]
        for (name, filter) in names { #expect(try options("ra:\(name)").resizingAlgorithm == filter) }
        #expect(throws: ProxyError.self) { try options("ra:bilinear") }
        #expect(try options("ra:cubic").canonical != (try options("ra:lanczos3")).canonical)
        // Catmull-Rom (Keys, a = -0.5): 1 at 0, 0 at 1, 0.5625 at 0.5, -0.0625 at 1.5, 0 from 2.
        #expect(ResamplingFilter.bicubic.weight(0) == 1 && ResamplingFilter.bicubic.weight(1) == 0)
        #expect(ResamplingFilter.bicubic.weight(0.5) == 0.5625 && ResamplingFilter.bicubic.weight(-1.5) == -0.0625)
        #expect(ResamplingFilter.bicubic.weight(2) == 0)
        // Lanczos 2 at 0.5: sinc(0.5) sinc(0.25) = (2 / pi) (4 sin(pi / 4) / pi) = 0.5731591682.
        #expect(abs(ResamplingFilter.lanczos2.weight(0.5) - 0.5731591682) < 1e-9 && ResamplingFilter.lanczos2.weight(2) == 0)
        let plan = try ProcessingPlan(options: options("rs:fit:10:10/ra:nearest"), sourceWidth: 40, sourceHeight: 40)
        let steps = plan.transformers(options: try options("rs:fit:10:10/ra:nearest"), decodedWidth: 40, decodedHeight: 40, sourceWidth: 40)
        #expect(steps.contains { $0.transformerKey.hasSuffix(":nearest") }, "\(steps.map(\.transformerKey))")
    }

    @Test(
        "car shrinks the long side to the ratio, or grows the short one and fits it back in the image",
        arguments: [
            ("c:100:200/car:1", 400, 400, 100, 100),
            ("c:100:200/car:1:1", 400, 400, 200, 200),
            ("c:100:200/car:1:1", 150, 400, 150, 150),
            ("c:300:100/car:2", 400, 400, 200, 100),
            ("c:300:100/car:2:1", 400, 400, 300, 150),
            ("c:0.5:0.5/car:0.5", 400, 200, 50, 100),
            ("c:100:200/car:0", 400, 400, 100, 200),
        ])
    func cropAspectRatio(text: String, sourceWidth: Int, sourceHeight: Int, width: Int, height: Int) throws {
        let parsed = try options(text)
        let crop = try #require(parsed.crop)
        let size = ProcessingPlan.cropSize(crop, aspectRatio: parsed.cropAspectRatio, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        #expect(size.width == width && size.height == height, "\(text) on \(sourceWidth)x\(sourceHeight): \(size)")
        let plan = try ProcessingPlan(options: parsed, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        #expect(plan.crop?.width == width && plan.crop?.height == height)
    }

    @Test("the unsharp mask's arithmetic, and when each mode applies it")
    func unsharpMasking() throws {
        // A 3x3 image, 100 in the centre and 50 around: 100 + (1 / 24) (8 x 100 - 8 x 50) = 116.7.
        var bytes = [UInt8](repeating: 0, count: 36)
        for pixel in 0..<9 {
            bytes.replaceSubrange(pixel * 4..<pixel * 4 + 4, with: pixel == 4 ? [100, 100, 100, 255] : [50, 50, 50, 255])
        }
        let image = Image(pixels: PixelBuffer(width: 3, height: 3, straightRGBA: bytes))
        let sharpened = try #require(UnsharpMaskTransformer(weight: 1, divider: 24).transform(image, forKey: "")).frames[0].pixels
        #expect(sharpened.pixel(x: 1, y: 1) == (117, 117, 117, 255))
        // The corner (0, 0): its neighbours repeat the edge: 50 x 5 (itself, left, up, up-left) ...
        // three times 50 and once 100 among the eight: 50 + (8 x 50 - (7 x 50 + 100)) / 24 = 47.9.
        #expect(sharpened.pixel(x: 0, y: 0) == (48, 48, 48, 255))
        let flat = Image(pixels: PixelBuffer(width: 2, height: 2, straightRGBA: [UInt8](repeating: 77, count: 16)))
        #expect(
            UnsharpMaskTransformer(weight: 3, divider: 1).transform(flat, forKey: "")?.frames[0].pixels.bytes == flat.frames[0].pixels.bytes
        )

        func masks(_ text: String, source: Int) throws -> Bool {
            let parsed = try options(text)
            let plan = try ProcessingPlan(options: parsed, sourceWidth: source, sourceHeight: source)
            return plan.transformers(options: parsed, decodedWidth: source, decodedHeight: source, sourceWidth: source)
                .contains { $0 is UnsharpMaskTransformer }
        }
        #expect(try masks("w:50/ush:auto", source: 100))
        #expect(try !masks("w:50/ush:auto/sh:1", source: 100), "auto: not with sharpen")
        #expect(try !masks("w:50/ush:auto", source: 40), "auto: not without a downscale")
        #expect(try masks("w:50/ush:always", source: 40))
        #expect(try !masks("w:50/ush:none", source: 100))
        #expect(try !masks("w:50", source: 100), "none unless the server or the URL asks")
        #expect(
            try options("ush::2:12").unsharpMasking
                == {
                    var masking = UnsharpMasking(mode: .auto)
                    masking.weight = 2
                    masking.divider = 12
                    return masking
                }())
        for bad in ["ush:sometimes", "ush:auto:0", "ush:auto:1:-1", "ush:a:b:c:d"] {
            #expect(throws: ProxyError.self, "\(bad)") { try options(bad) }
        }
    }

    @Test("autoquality's size search: the highest quality that fits, the minimum when none does")
    func autoqualitySearch() throws {
        var tried: [Int] = []
        func attempt(_ quality: Int) -> Data {
            tried.append(quality)
            return Data(count: quality * 100)
        }
        var autoquality = Autoquality(target: 7_050)
        autoquality.minimum = 60
        autoquality.maximum = 80
        let found = try ImageProcessor.search(autoquality, attempt)
        #expect(found.quality == 70 && found.data.count == 7_000)
        #expect(tried.first == 80 && tried.count <= 6, "the maximum first, then bisection: \(tried)")
        tried = []
        autoquality.target = 100_000
        #expect(try ImageProcessor.search(autoquality, attempt).quality == 80 && tried == [80], "fits at the maximum: one encode")
        autoquality.target = 10
        #expect(try ImageProcessor.search(autoquality, attempt).quality == 60, "nothing fits: the minimum")

        #expect(try options("aq:size:5000").autoquality == Autoquality(target: 5000))
        #expect(try options("aq:size:5000:10:50").autoquality?.minimum == 10)
        #expect(try options("aq:size:5000/aq:none").autoquality == nil)
        for bad in ["aq:dssim:0.02", "aq:ml", "aq:size", "aq:size:100:90:80", "aq:size:100:0:80", "aq:fast:1"] {
            #expect(throws: ProxyError.self, "\(bad)") { try options(bad) }
        }
    }

    @Test("best format's candidates follow what the result must hold")
    func bestCandidates() {
        var rule = OutputFormatRule(requested: nil, preferred: [.webP], sourceFormats: [.jpeg, .png, .gif])
        rule.best = true
        #expect(rule.candidates(source: .jpeg, animated: false, transparent: false) == [.webP, .jpeg, .png, .gif])
        #expect(rule.candidates(source: .png, animated: false, transparent: true) == [.webP, .png, .gif], "no JPEG for transparency")
        #expect(rule.candidates(source: .gif, animated: true, transparent: false) == [.webP, .gif], "only formats that animate")
        rule.best = false
        #expect(rule.candidates(source: .jpeg, animated: false, transparent: false) == [.webP])
    }

    @Test("aq, best, pages, ra and ush through the server")
    func served() async throws {
        let photo = [UInt8](try Fixture.data("gradient.jpg"))
        let flat = [UInt8](
            try CodersManager.shared.encode(
                Image(
                    pixels: PixelBuffer(
                        width: 64, height: 64, straightRGBA: Array([[UInt8]](repeating: [10, 20, 30, 255], count: 4096).joined()))),
                as: .png))
        let frames = [[UInt8]([255, 0, 0, 255]), [0, 0, 255, 255]].map {
            ImageFrame(
                pixels: PixelBuffer(width: 4, height: 3, straightRGBA: Array([[UInt8]](repeating: $0, count: 12).joined())),
                duration: .milliseconds(100))
        }
        let gif = [UInt8](try CodersManager.shared.encode(Image(frames: frames, hasAlpha: false), as: .gif))
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.jpg", .ok(photo, contentType: "image/jpeg"))
            harness.origin.route("/f.png", .ok(flat, contentType: "image/png"))
            harness.origin.route("/a.gif", .ok(gif, contentType: "image/gif"))
            func body(_ options: String, _ path: String, _ format: String? = "jpg") async throws -> (type: String?, bytes: Data) {
                let answer = try await harness.get(harness.signedPlain(options, path, extension: format))
                #expect(answer.status == 200, "\(options): \(String(decoding: answer.body, as: UTF8.self))")
                return (answer.header("Content-Type"), answer.body)
            }
            // autoquality: the answer is the q answer of the highest quality whose size fits.
            let sizes = try await (60...80).asyncMap { try await body("q:\($0)", "/a.jpg").bytes.count }
            let target = (sizes[5] + sizes[6]) / 2  // between q:65 and q:66
            #expect(sizes[5] <= target && sizes[6] > target, "sizes grow with quality: \(sizes)")
            let auto = try await body("aq:size:\(target):60:80", "/a.jpg")
            let at65 = try await body("q:65", "/a.jpg")
            #expect(auto.bytes == at65.bytes)
            // best: the flat picture is smallest as PNG, the photo as JPEG.
            let bestFlat = try await body("f:best", "/f.png", nil)
            let flatJPEG = try await body("w:0", "/f.png", "jpg")
            #expect(bestFlat.type == "image/png" && bestFlat.bytes.count <= flatJPEG.bytes.count)
            let bestPhoto = try await body("w:0", "/a.jpg", "best")
            let photoJPEG = try await body("w:0", "/a.jpg", "jpg")
            // best encodes its candidates from RGBA pixels; a plain JPEG of a JPEG is resized in
            // YCbCr (JPEGPlanarResize): the same picture to within rounding.
            #expect(bestPhoto.type == "image/jpeg")
            let chosen = try CodersManager.shared.decode(bestPhoto.bytes).pixels
            let plainJPEG = try CodersManager.shared.decode(photoJPEG.bytes).pixels
            #expect(largestChannelDifference(chosen, plainJPEG) <= 12, "measured: 6")
            // pages: the two frames stacked, red over blue.
            let stacked = try CodersManager.shared.decode(try await body("pgs:2", "/a.gif", "png").bytes).frames[0].pixels
            #expect(stacked.width == 4 && stacked.height == 6)
            #expect(stacked.pixel(x: 0, y: 2).red > 200 && stacked.pixel(x: 0, y: 3).blue > 200, "frame 0 on top of frame 1")
            // A multi-page TIFF's pages (40x30 each): pg picks one, pgs stacks them.
            harness.origin.route("/m.tiff", .ok([UInt8](try Fixture.data("tiff/multi-page.tiff")), contentType: "image/tiff"))
            let tiffPages = try CodersManager.shared.decode(try await body("pg:1/pgs:2", "/m.tiff", "png").bytes)
            #expect(tiffPages.pixelWidth == 40 && tiffPages.pixelHeight == 60, "pages 1 and 2 stacked")
            let animated = try CodersManager.shared.decode(try await body("pgs:2", "/a.gif", "gif").bytes)
            #expect(animated.frames.count == 2, "ignored when the result animates")
            // ra and ush change the pixels.
            let plain = try await body("w:50", "/a.jpg", "png").bytes
            let nearest = try await body("w:50/ra:nearest", "/a.jpg", "png").bytes
            let masked = try await body("w:50/ush:always", "/a.jpg", "png").bytes
            #expect(nearest != plain && masked != plain)
        }
    }
}

/// `keep_copyright`, `enforce_thumbnail` and `preserve_hdr`, from imgproxy's source: `vips_strip`
/// (`vips/vips.c`) keeps `exif-ifd0-Copyright` and `exif-ifd0-Artist` when `keep_copyright` is on
/// (the default, `processing/config.go` `KeepCopyright: true`); `enforce_thumbnail` reads a HEIF's
/// embedded thumbnail (libvips `heifload` `thumbnail`); `preserve_hdr` keeps high bit depths.
@Suite("imgproxy keep_copyright, enforce_thumbnail, preserve_hdr", .serialized)
struct ImgproxyMetadataOptionsTests {
    /// A JPEG whose EXIF holds Make, Artist and Copyright.
    static func signedJPEG() throws -> [UInt8] {
        let exif = CopyrightEXIF.minimalTIFF([
            (0x010F, Array("Camera Maker".utf8) + [0]), (0x013B, Array("Ann Author".utf8) + [0]),
            (0x8298, Array("(c) 2026 Ann".utf8) + [0]),
        ])
        var image = Image(pixels: PixelBuffer(width: 8, height: 8, straightRGBA: [UInt8](repeating: 200, count: 256)))
        image.exif = exif
        return [UInt8](try CodersManager.shared.encode(image, as: .jpeg, options: EncodeOptions(quality: 0.9)))
    }

    @Test("stripping keeps only the Copyright and Artist unless kcr:0; sm:0 keeps everything")
    func keepCopyright() async throws {
        let jpeg = try Self.signedJPEG()
        #expect(ExifDump.tags(of: Data(jpeg))?.contains { $0.0 == "Image Make" } == true, "the fixture has a Make")
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/s.jpg", .ok(jpeg, contentType: "image/jpeg"))
            func tags(_ options: String) async throws -> [String: String] {
                let answer = try await harness.get(harness.signedPlain(options, "/s.jpg", extension: "jpg"))
                #expect(answer.status == 200)
                return Dictionary(ExifDump.tags(of: Data(answer.body)) ?? [], uniquingKeysWith: { first, _ in first })
            }
            let kept = try await tags("w:4")
            #expect(
                kept["Image Artist"] == "Ann Author" && kept["Image Copyright"] == "(c) 2026 Ann" && kept["Image Make"] == nil, "\(kept)")
            #expect(try await tags("w:4/kcr:0").isEmpty)
            #expect(try await tags("w:4/sm:0")["Image Make"] == "Camera Maker")
        }
        #expect(CopyrightEXIF.kept(from: CopyrightEXIF.minimalTIFF([(0x010F, Array("Make".utf8) + [0])])) == nil, "nothing to keep")
        var configuration = ServerHarness.configuration()
        configuration.keepCopyright = false
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/s.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let answer = try await harness.get(harness.signedPlain("w:4", "/s.jpg", extension: "jpg"))
            #expect(ExifDump.tags(of: Data(answer.body))?.isEmpty ?? true, "the server's default off")
            let asked = try await harness.get(harness.signedPlain("w:4/kcr:1", "/s.jpg", extension: "jpg"))
            #expect(ExifDump.tags(of: Data(asked.body))?.contains { $0.0 == "Image Copyright" } == true, "the URL's on")
        }
    }

    @Test("eth answers a HEIF's embedded thumbnail; ph:1 and ph:0 leave an 8-bit source as it is")
    func thumbnailAndHDR() async throws {
        let heic = [UInt8](try Fixture.data("heif/photo.heic"))
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/p.heic", .ok(heic, contentType: "image/heic"))
            func size(_ options: String) async throws -> (Int, Int) {
                let answer = try await harness.get(harness.signedPlain(options, "/p.heic", extension: "png"))
                #expect(answer.status == 200, "\(options)")
                let image = try CodersManager.shared.decode(answer.body)
                return (image.pixelWidth, image.pixelHeight)
            }
            #expect(try await size("w:0") == (48, 32))
            // photo.heic carries a 16 px thumbnail (heif-enc's -t 16): 16x11 of the 48x32 image.
            let thumbnail = try await size("eth:1")
            #expect(thumbnail.0 == 16 && thumbnail.1 < 16, "\(thumbnail)")
            #expect(try await size("eth:1/w:8").0 == 8, "the plan is made from the thumbnail's size")
            #expect(try await size("ph:1") == (48, 32), "an 8-bit HEIF with preserve_hdr is the same picture")
            #expect(try await size("ph:0") == (48, 32))
        }
    }
}

/// The variables of those options: imgproxy's `IMGPROXY_KEEP_COPYRIGHT` and
/// `IMGPROXY_ENFORCE_THUMBNAIL` (`processing/config.go`), and Pro's `IMGPROXY_UNSHARP_MASKING_*`
/// and `IMGPROXY_AUTOQUALITY_*` (imgproxy-docs `configuration/options.mdx`).
@Suite("imgproxy Pro variables")
struct ImgproxyProVariablesTests {
    static let key = ["IMGPROXY_KEY": "736563726574", "IMGPROXY_SALT": "68656C6C6F"]

    func configuration(_ variables: [String: String], _ flags: [String] = []) throws -> ImageServerConfiguration {
        try ServeSettings(arguments: flags, environment: Self.key.merging(variables) { $1 }).configuration
    }

    @Test("each reaches the server's configuration and the parser's defaults; values out of range stop the start")
    func read() throws {
        let defaults = try configuration([:])
        #expect(defaults.keepCopyright && !defaults.enforceThumbnail && defaults.unsharpMasking == nil && !defaults.autoqualityByDefault)
        let set = try configuration([
            "IMGPROXY_KEEP_COPYRIGHT": "false", "IMGPROXY_ENFORCE_THUMBNAIL": "1", "IMGPROXY_UNSHARP_MASKING_MODE": "always",
            "IMGPROXY_UNSHARP_MASKING_WEIGHT": "2", "IMGPROXY_AUTOQUALITY_METHOD": "size", "IMGPROXY_AUTOQUALITY_TARGET": "10240",
            "IMGPROXY_AUTOQUALITY_MIN": "10",
        ])
        #expect(!set.keepCopyright && set.enforceThumbnail)
        #expect(set.unsharpMasking?.mode == .always && set.unsharpMasking?.weight == 2 && set.unsharpMasking?.divider == 24)
        #expect(
            set.autoqualityByDefault
                && set.autoqualityDefaults
                    == {
                        var quality = Autoquality(target: 10240)
                        quality.minimum = 10
                        return quality
                    }()
        )
        #expect(try configuration(["IMGPROXY_KEEP_COPYRIGHT": "false"], ["--keep-copyright"]).keepCopyright, "a flag wins")
        for (name, value) in [
            ("IMGPROXY_UNSHARP_MASKING_MODE", "sometimes"), ("IMGPROXY_UNSHARP_MASKING_DIVIDER", "0"),
            ("IMGPROXY_AUTOQUALITY_METHOD", "dssim"),
            ("IMGPROXY_AUTOQUALITY_METHOD", "size"), ("IMGPROXY_AUTOQUALITY_MAX", "101"),
        ] {
            #expect(throws: (any Error).self, "\(name)=\(value)") { try configuration([name: value]) }
        }
    }

    @Test("the client limits, the graceful stop and libwebp's preset are read from imgproxy's variables")
    func serverVariables() throws {
        let set = try configuration([
            "IMGPROXY_READ_REQUEST_TIMEOUT": "5", "IMGPROXY_WRITE_RESPONSE_TIMEOUT": "7", "IMGPROXY_MAX_CLIENTS": "0",
            "IMGPROXY_GRACEFUL_STOP_TIMEOUT": "3", "IMGPROXY_WEBP_PRESET": "text", "IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT": "0",
        ])
        #expect(set.sourceKeepAliveTimeout == .zero)
        #expect(try configuration(["IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT": "90"]).sourceKeepAliveTimeout == .seconds(90))
        #expect(set.readRequestTimeout == .seconds(5) && set.writeResponseTimeout == .seconds(7) && set.gracefulStopTimeout == .seconds(3))
        #expect(set.maximumClients == 0 && set.encoding.webPPreset == .text)
        let defaults = try configuration([:])
        #expect(defaults.maximumClients == 2048 && defaults.readRequestTimeout == .seconds(10) && defaults.encoding.webPPreset == .default)
        #expect(defaults.gracefulStopTimeout == nil, "unset: the request timeout and 5 seconds, so a drain cuts nothing short")
        #expect(defaults.drainGrace == .seconds(1))
        #expect(try configuration(["WEBIMAGE_DRAIN_GRACE": "0.25"]).drainGrace == .milliseconds(250))
        #expect(try configuration([:], ["--drain-grace", "0"]).drainGrace == .zero)
        #expect(throws: (any Error).self) { try configuration(["IMGPROXY_WEBP_PRESET": "cartoon"]) }
        #expect(throws: (any Error).self) { try configuration(["IMGPROXY_MAX_CLIENTS": "-1"]) }
        // The preset reaches libwebp: another configuration, other bytes, both decodable.
        var pixels: [UInt8] = []
        for y in 0..<32 { for x in 0..<32 { pixels += [UInt8(x * 8), UInt8(y * 8), UInt8((x ^ y) * 8), 255] } }
        let image = Image(pixels: PixelBuffer(width: 32, height: 32, straightRGBA: pixels))
        var text = EncodeOptions(quality: 0.75)
        text.webPPreset = .text
        let plain = try CodersManager.shared.encode(image, as: .webP, options: EncodeOptions(quality: 0.75))
        let preset = try CodersManager.shared.encode(image, as: .webP, options: text)
        let decoded = try CodersManager.shared.decode(preset)
        #expect(plain != preset && decoded.pixelWidth == 32)
    }

    @Test("the server's autoquality is every URL's default; aq:none turns it off")
    func serverAutoquality() async throws {
        let photo = [UInt8](try Fixture.data("gradient.jpg"))
        var configuration = ServerHarness.configuration()
        configuration.autoqualityDefaults = Autoquality(target: 100)
        configuration.autoqualityDefaults.minimum = 10
        configuration.autoqualityByDefault = true
        configuration.unsharpMasking = UnsharpMasking(mode: .always)
        var plainConfiguration = ServerHarness.configuration()
        plainConfiguration.defaultQuality = 80
        var expected: [String: Data] = [:]
        try await ServerHarness.inProcess(plainConfiguration) { harness throws in
            harness.origin.route("/a.jpg", .ok(photo, contentType: "image/jpeg"))
            for options in ["q:10/ush:always", "q:80/ush:always", "q:80"] {
                expected[options] = try await harness.get(harness.signedPlain(options, "/a.jpg", extension: "jpg")).body
            }
        }
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/a.jpg", .ok(photo, contentType: "image/jpeg"))
            // 100 bytes fit no quality: the minimum, 10; with the server's unsharp masking.
            #expect(try await harness.get(harness.signedPlain("w:0", "/a.jpg", extension: "jpg")).body == expected["q:10/ush:always"])
            #expect(
                try await harness.get(harness.signedPlain("aq:none/q:80", "/a.jpg", extension: "jpg")).body == expected["q:80/ush:always"])
            #expect(
                try await harness.get(harness.signedPlain("aq:none/q:80/ush:none", "/a.jpg", extension: "jpg")).body == expected["q:80"])
        }
    }
}

extension Sequence {
    /// The results of `transform` on each element, in order, one at a time.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

/// `watermark_text` (imgproxy-docs `usage/processing.mdx`: URL-safe base64 text with Pango
/// markup, black `sans 16` by default), drawn here through librsvg (``TextWatermark``).
@Suite("imgproxy watermark_text", .serialized)
struct ImgproxyTextWatermarkTests {
    @Test("markup becomes SVG tspans; text is escaped; what is not Pango markup is a 400")
    func markup() throws {
        let svg = try TextWatermark.svg(
            markup: "a <b>bold</b> &amp; <span foreground=\"#ff000080\" size=\"24pt\">big red</span>\nline 2 &lt;\"'")
        #expect(svg.contains("<tspan font-weight=\"bold\">bold</tspan> &amp; "))
        #expect(svg.contains("<tspan fill=\"#ff0000\" fill-opacity=\"0.502\" font-size=\"24\">big red</tspan>"), "\(svg)")
        #expect(svg.contains("dy=\"1.2em\">line 2 &lt;&quot;&apos;</tspan>"), "a newline starts a line; the rest escaped")
        #expect(
            try TextWatermark.svg(markup: "<span font=\"Serif Bold Italic 20\">x</span>").contains(
                "<tspan font-size=\"20\" font-style=\"italic\" font-weight=\"700\" font-family=\"Serif\">x</tspan>"))
        for bad in [
            "<blink>x</blink>", "<b>x", "x</i>", "<b class=\"a\">x</b>", "&nope;", "<span size=\"huge\">x</span>",
            "<span onclick=\"x\">x</span>", "<span foreground=\"url(#a)\">x</span>", "<b", "a&#0;b", "a\u{7}b",
        ] {
            #expect(throws: ProxyError.self, "\(bad)") { try TextWatermark.svg(markup: bad) }
        }
        #expect(throws: ProxyError.self) { try OptionsParser().parse(["wmt:" + URLSigner.base64URL(Array("<x>".utf8))]) }
        #expect(throws: ProxyError.self) { try OptionsParser().parse(["wmt:%%"]) }
    }

    @Test("hostile markup: 5,000 seeded random mixes of tags, attributes, entities and text each parse or give a 400")
    func hostileMarkup() {
        let pieces = [
            "<b>", "</b>", "<span", " size=\"", "\"", "'", ">", "</span>", "&amp;", "&#x1F600;", "&#0;", "&", ";", "<", "=",
            "foreground=\"#ff0000\"", "font=\"Sans 9999\"", "\n", "x", "é", "<big>", "</big>", "<sup>", "</sup>", "/>", "&lt;",
            "letter_spacing=\"-5\"", "alpha=\"50%\"", "weight=\"900\"", " ",
        ]
        var generator = SplitMix64(seed: 37)
        var accepted = 0
        for _ in 0..<5_000 {
            let markup = (0..<Int.random(in: 1...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            do {
                let svg = try TextWatermark.svg(markup: markup)
                #expect(svg.hasPrefix("<svg") && svg.hasSuffix("</svg>"))
                accepted += 1
            } catch {
                #expect(error.status == 400, "\(markup): \(error)")
            }
        }
        #expect(accepted > 100, "some mixes are well formed: \(accepted)")
    }

    @Test("wmsh: a blurred black shadow of the mark's shape under it, the canvas grown by three sigmas")
    func shadow() async throws {
        let white = try ImgproxyWatermarkTests.plain(64, 64, [255, 255, 255, 255])
        let red = try ImgproxyWatermarkTests.plain(8, 8, [255, 0, 0, 255])
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.png", .ok(white, contentType: "image/png"))
            harness.origin.route("/m.png", .ok(red, contentType: "image/png"))
            let mark = "wmu:" + URLSigner.base64URL(Array(harness.origin.url("/m.png").absoluteString.utf8))
            func pixels(_ options: String) async throws -> PixelBuffer {
                let answer = try await harness.get(harness.signedPlain(options, "/a.png", extension: "png"))
                #expect(answer.status == 200, "\(options)")
                return try CodersManager.shared.decode(answer.body).frames[0].pixels
            }
            let plain = try await pixels("wm:1:nowe/\(mark)")
            #expect(plain.pixel(x: 0, y: 0) == (255, 0, 0, 255) && plain.pixel(x: 9, y: 9) == (255, 255, 255, 255))
            // Sigma 2: a 6-pixel margin, so the 8x8 mark sits at (6, 6) and the shadow darkens around it.
            let shaded = try await pixels("wm:1:nowe/\(mark)/wmsh:2")
            #expect(shaded.pixel(x: 6, y: 6) == (255, 0, 0, 255) && shaded.pixel(x: 13, y: 13) == (255, 0, 0, 255))
            let beside = shaded.pixel(x: 14, y: 10)
            #expect(beside.red < 220 && beside.red == beside.green, "grey shadow beside the mark: \(beside)")
            #expect(shaded.pixel(x: 30, y: 30) == (255, 255, 255, 255), "past the margin: untouched")
        }
        #expect(throws: ProxyError.self) { try OptionsParser().parse(["wmsh:-1"]) }
    }

    @Test("the text is laid where wm puts it, black by default, in the markup's colour and size")
    func served() async throws {
        let white = try ImgproxyWatermarkTests.plain(200, 100, [255, 255, 255, 255])
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.png", .ok(white, contentType: "image/png"))
            func ink(_ options: String) async throws -> (box: (x: Int, y: Int, width: Int, height: Int)?, red: Bool) {
                let answer = try await harness.get(harness.signedPlain(options, "/a.png", extension: "png"))
                #expect(answer.status == 200, "\(options): \(String(decoding: answer.body, as: UTF8.self))")
                let pixels = try CodersManager.shared.decode(answer.body).frames[0].pixels
                var marked = [UInt8](repeating: 0, count: pixels.width * pixels.height * 4)
                var red = false
                for y in 0..<pixels.height {
                    for x in 0..<pixels.width {
                        let pixel = pixels.pixel(x: x, y: y)
                        if pixel.red < 128 || pixel.green < 128 { marked[(y * pixels.width + x) * 4 + 3] = 255 }
                        if pixel.red > 200 && pixel.green < 100 { red = true }
                    }
                }
                return (TrimFinder.inkBox(of: PixelBuffer(width: pixels.width, height: pixels.height, straightRGBA: marked)), red)
            }
            func text(_ markup: String) -> String { "wmt:" + URLSigner.base64URL(Array(markup.utf8)) }
            let plain = try #require(try await ink("wm:1:nowe/\(text("Hi"))").box)
            // Cut to its ink and laid at the top left (its faintest edge pixels stay light).
            #expect(plain.x <= 2 && plain.y <= 2, "\(plain)")
            #expect((8...20).contains(plain.height) && (10...30).contains(plain.width), "sans 16: \(plain)")
            let southEast = try #require(try await ink("wm:1:soea/\(text("Hi"))").box)
            #expect(southEast.x + southEast.width >= 198 && southEast.y + southEast.height >= 98, "\(southEast)")
            let large = try #require(try await ink("wm:1:nowe/\(text("<span size=\"32pt\">Hi</span>"))").box)
            #expect(large.height > plain.height * 3 / 2 && large.width > plain.width * 3 / 2)
            #expect(try await ink("wm:1:nowe/\(text("<span foreground=\"red\">Hi</span>"))").red)
            #expect(try await ink(text("Hi")).box == nil, "no wm, no mark")
            #expect(try await harness.get(harness.signedPlain("wm:1/\(text(" "))", "/a.png", extension: "png")).status == 400)
            // Text too large to lay out is refused as any SVG is (librsvg would abort on it), not drawn.
            let huge = String(repeating: "<big>", count: 60) + "x" + String(repeating: "</big>", count: 60)
            let refused = try await harness.get(harness.signedPlain("wm:1/\(text(huge))", "/a.png", extension: "png"))
            #expect((400..<500).contains(refused.status), "\(refused.status): \(refused.text)")
        }
    }
}

/// `/info`'s `dominant_colors` (imgproxy-docs `usage/getting_info.mdx`: `dc:1:BUILD_MISSED`, the
/// six swatches as `{"R":…,"G":…,"B":…}`), worked by hand from Android Palette's targets
/// (``DominantColors``): each colour below falls within one swatch's lightness and saturation
/// bounds (muted's 128,96,112 has lightness 0.439, saturation 0.143; it also fits dark muted's
/// bounds but muted is chosen first).
@Suite("imgproxy /info dominant colours", .serialized)
struct ImgproxyDominantColorsTests {
    static let blocks: [[UInt8]] = [[220, 20, 20], [128, 255, 128], [0, 0, 128], [128, 96, 112], [200, 190, 200], [60, 50, 60]]

    static func picture(_ colors: [[UInt8]], background: [UInt8]? = nil) -> PixelBuffer {
        var bytes: [UInt8] = []
        for y in 0..<10 {
            for color in colors { for _ in 0..<10 { bytes += color + [255] } }
            if let background, y >= 0 { for _ in 0..<20 { bytes += background + [255] } }
        }
        return PixelBuffer(width: colors.count * 10 + (background == nil ? 0 : 20), height: 10, straightRGBA: bytes)
    }

    @Test("each swatch found where its bounds put it; missing vibrants built from the other")
    func swatches() {
        let found = DominantColors.swatches(of: Self.picture(Self.blocks), buildMissed: false)
        func rgb(_ name: String) -> [Int]? { found[name].map { [$0.red, $0.green, $0.blue] } }
        #expect(rgb("vibrant") == [220, 20, 20] && rgb("light_vibrant") == [128, 255, 128] && rgb("dark_vibrant") == [0, 0, 128])
        #expect(rgb("muted") == [128, 96, 112] && rgb("light_muted") == [200, 190, 200] && rgb("dark_muted") == [60, 50, 60])
        // Only a dark blue on white (white is ignored): the vibrant is it at lightness 0.5, pure blue.
        let blue = Self.picture([[0, 0, 128]], background: [255, 255, 255])
        #expect(DominantColors.swatches(of: blue, buildMissed: false).keys.sorted() == ["dark_vibrant"])
        let built = DominantColors.swatches(of: blue, buildMissed: true)
        #expect(built["vibrant"] == DominantColors.Swatch(red: 0, green: 0, blue: 255, population: 0))
        #expect(DominantColors.swatches(of: PixelBuffer(width: 1, height: 1, straightRGBA: [0, 0, 0, 0]), buildMissed: true).isEmpty)
        // Many colours: at most 16 boxes, every pixel counted once.
        var gradient: [UInt8] = []
        for y in 0..<64 { for x in 0..<64 { gradient += [UInt8(x * 4), UInt8(y * 4), 128, 255] } }
        let histogram = DominantColors.histogram(PixelBuffer(width: 64, height: 64, straightRGBA: gradient))
        let boxes = DominantColors.quantized(histogram, maximumColors: 16)
        #expect(boxes.count == 16 && boxes.reduce(0) { $0 + $1.population } == histogram.reduce(0) { $0 + $1.population })
    }

    @Test("served as imgproxy's JSON member; off by default")
    func served() async throws {
        let png = [UInt8](try CodersManager.shared.encode(Image(pixels: Self.picture(Self.blocks)), as: .png))
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/b.png", .ok(png, contentType: "image/png"))
            let answer = try await harness.get("/info" + harness.signedPlain("dc:1", "/b.png"))
            #expect(answer.status == 200)
            let object = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
            let colors = try #require(object["dominant_colors"] as? [String: [String: Int]])
            #expect(
                colors.count == 6 && colors["vibrant"] == ["R": 220, "G": 20, "B": 20]
                    && colors["dark_muted"] == ["R": 60, "G": 50, "B": 60])
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(
                text.contains("\"dominant_colors\": {\"dark_muted\": {\"R\": 60, \"G\": 50, \"B\": 60}, \"dark_vibrant\""), "names in order"
            )
            let plain = try await harness.get("/info" + harness.signedPlain("s:1", "/b.png"))
            #expect(!String(decoding: plain.body, as: UTF8.self).contains("dominant_colors"))
        }
        #expect(throws: ProxyError.self) { try OptionsParser().parseInfo(["dc:maybe"]) }
    }
}
