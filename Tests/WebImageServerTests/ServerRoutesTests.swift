import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageTesting
@testable import WebImageServer
import WebImageTestSupport

/// imgproxy's server settings, as its `imgproxy.go` (`BuildRouter`), `server/middlewares.go`
/// (`WithSecret`, `WithCORS`) and `processing/options.go` (`Quality`) define them: the path
/// prefix added to every route, the bearer secret on processing requests only, the CORS headers
/// on processing answers and on `OPTIONS` (answered 200), a second health path, and the quality
/// a result is encoded at.
@Suite("Server routes", .serialized)
struct ServerRoutesTests {
    let jpeg: [UInt8]

    init() throws {
        jpeg = [UInt8](try Fixture.data("gradient.jpg"))
    }

    @Test("quality in imgproxy's order: the URL's q, its fq for the format, the server's per-format default, its default")
    func qualityOrder() throws {
        let parser = OptionsParser()
        let defaults: [ImageFormat: Int] = [.webP: 79, .avif: 63]
        func quality(_ options: String, _ format: ImageFormat) throws -> Int {
            try parser.parse(options.split(separator: "/")).quality(for: format, defaults: defaults, fallback: 80)
        }
        #expect(try quality("q:50/fq:webp:30", .webP) == 50, "q wins over fq, as imgproxy reads them")
        #expect(try quality("fq:webp:30", .webP) == 30)
        #expect(try quality("fq:jpeg:30", .webP) == 79, "another format's fq does not apply")
        #expect(try quality("w:10", .avif) == 63)
        #expect(try quality("w:10", .jpeg) == 80)
        #expect(try quality("fq:webp:0", .webP) == 79, "0 is unset")
        #expect(ImageServerConfiguration().formatQuality == [.webP: 79, .avif: 63, .jpegXL: 77], "imgproxy's processing/config.go")
    }

    @Test("a WebP result without q is encoded at the configured 79, byte for byte q:79's")
    func formatQualityDefault() async throws {
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let plain = try await harness.get(harness.signedPlain("w:64", "/a.jpg", extension: "webp"))
            let at79 = try await harness.get(harness.signedPlain("w:64/q:79", "/a.jpg", extension: "webp"))
            let at80 = try await harness.get(harness.signedPlain("w:64/q:80", "/a.jpg", extension: "webp"))
            #expect(plain.status == 200 && plain.header("Content-Type") == "image/webp")
            #expect(plain.body == at79.body)
            #expect(plain.body != at80.body)
        }
    }

    @Test("IMGPROXY_PATH_PREFIX: every route under the prefix, nothing outside it")
    func pathPrefix() async throws {
        var configuration = ServerHarness.configuration()
        configuration.pathPrefix = "/images"
        configuration.healthCheckPath = "/alive"
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let signed = harness.signedPlain("w:20", "/a.jpg", extension: "png")
            let prefixed = try await harness.get("/images" + signed)
            #expect(prefixed.status == 200)
            #expect(try await harness.get(signed).status == 404, "outside the prefix")
            #expect(try await harness.get("/imagesx" + signed).status == 404, "the prefix ends at a /")
            #expect(try await harness.get("/images/health").text == "imgproxy is running")
            #expect(try await harness.get("/images/alive").text == "imgproxy is running")
            #expect(try await harness.get("/health").status == 404)
        }
    }

    @Test("IMGPROXY_SECRET: a processing request needs Authorization: Bearer SECRET; health does not")
    func secret() async throws {
        var configuration = ServerHarness.configuration()
        configuration.secret = "s3cr3t"
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let signed = harness.signedPlain("w:20", "/a.jpg", extension: "png")
            let authorized = try await harness.get(signed, headers: [("Authorization", "Bearer s3cr3t")])
            #expect(authorized.status == 200)
            for wrong in [[], [("Authorization", "Bearer s3cr3")], [("Authorization", "Bearer s3cr3tt")], [("Authorization", "s3cr3t")]] {
                let refused = try await harness.get(signed, headers: wrong)
                #expect(refused.status == 403, "\(wrong)")
                #expect(refused.text.contains("secret"), "\(refused.text)")
            }
            #expect(harness.origin.requestCount("/a.jpg") == 1, "a refused request fetched nothing")
            #expect(try await harness.get("/health").status == 200)
        }
        #expect(ImageServer.constantTimeEqual("Bearer a", "Bearer a"))
        #expect(!ImageServer.constantTimeEqual("Bearer a", "Bearer b"))
        #expect(!ImageServer.constantTimeEqual("", "Bearer a"))
    }

    @Test("IMGPROXY_ALLOW_ORIGIN: CORS headers on processing answers, errors included, and a 200 to OPTIONS")
    func cors() async throws {
        var configuration = ServerHarness.configuration()
        configuration.allowOrigin = "https://app.example"
        try await ServerHarness.inProcess(configuration) { harness in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let signed = harness.signedPlain("w:20", "/a.jpg", extension: "png")
            for answer in [try await harness.get(signed), try await harness.get("/bad/w:20/plain/x")] {
                #expect(answer.header("Access-Control-Allow-Origin") == "https://app.example")
                #expect(answer.header("Access-Control-Allow-Methods") == "GET, OPTIONS")
            }
            let preflight = try await harness.get(signed, method: .OPTIONS)
            #expect(preflight.status == 200 && preflight.body.isEmpty)
            #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example")
            #expect(harness.origin.requestCount("/a.jpg") == 1, "OPTIONS processed nothing")
        }
        try await ServerHarness.inProcess { harness in
            let answer = try await harness.get("/health", method: .OPTIONS)
            let deleted = try await harness.get("/health", method: .DELETE)
            #expect(answer.status == 200 && answer.header("Access-Control-Allow-Origin") == nil, "no origin configured, no CORS")
            #expect(deleted.status == 405)
        }
    }
}

/// The result's format, as imgproxy's `determineOutputFormat` (`processing/processing.go`) and its
/// client detector (`clientfeatures/detector.go`) choose it; each case says which branch.
@Suite("Output format")
struct OutputFormatTests {
    @Test("the rule, branch by branch")
    func rule() {
        let auto = OutputFormatRule(preferred: [.avif, .webP])
        // PreferAvif && !animated; PreferWebP (animated too).
        #expect(auto.resolve(source: .jpeg, animated: false, transparent: false) == .avif)
        #expect(auto.resolve(source: .gif, animated: true, transparent: false) == .webP)
        // isImageTypePreferred(source): kept; else findPreferredFormat by animation and alpha.
        let plain = OutputFormatRule()
        #expect(plain.resolve(source: .png, animated: false, transparent: true) == .png)
        #expect(plain.resolve(source: .webP, animated: false, transparent: false) == .jpeg)
        #expect(plain.resolve(source: .webP, animated: false, transparent: true) == .png)
        #expect(plain.resolve(source: .webP, animated: true, transparent: true) == .gif)
        #expect(
            OutputFormatRule(sourceFormats: [.jpeg]).resolve(source: .webP, animated: true, transparent: true) == .jpeg,
            "none fits: the first")
        // A requested format, unless an enforced one applies (AVIF only for a still source).
        let enforced = OutputFormatRule(requested: .png, enforced: [.avif])
        #expect(enforced.resolve(source: .jpeg, animated: false, transparent: false) == .avif)
        #expect(enforced.resolve(source: .gif, animated: true, transparent: false) == .png)
        #expect(OutputFormatRule(requested: .png, preferred: [.webP]).resolve(source: .jpeg, animated: false, transparent: false) == .png)
        // Frames are decoded only when the result may keep them.
        #expect(OutputFormatRule.fixed(.png).mayAnimate == false)
        #expect(OutputFormatRule.fixed(.gif).mayAnimate)
        #expect(OutputFormatRule(preferred: [.avif]).mayAnimate, "an animated source may stay a GIF")
    }

    @Test(
        "over HTTP: a WebP source becomes JPEG or PNG by its alpha; an animated GIF stays one for an AVIF client; enforce wins over the URL"
    )
    func overHTTP() async throws {
        let opaqueBytes: [UInt8] = (0..<64).flatMap { _ -> [UInt8] in [200, 120, 40, 255] }
        let opaque = try CodersManager.shared.encode(
            Image(pixels: PixelBuffer(width: 8, height: 8, premultipliedRGBA: opaqueBytes)), as: .webP)
        var translucentBytes = [UInt8](repeating: 0, count: 256)
        for pixel in stride(from: 0, to: 256, by: 4) { translucentBytes[pixel + 3] = UInt8(pixel) }
        let translucent = try CodersManager.shared.encode(
            Image(pixels: PixelBuffer(width: 8, height: 8, premultipliedRGBA: translucentBytes)), as: .webP)
        let animated = try Fixture.data("animated.gif")
        var configuration = ServerHarness.configuration()
        configuration.autoAVIF = true
        configuration.enforceWebP = true
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/opaque.webp", .ok([UInt8](opaque), contentType: "image/webp"))
            harness.origin.route("/translucent.webp", .ok([UInt8](translucent), contentType: "image/webp"))
            harness.origin.route("/animated.gif", .ok([UInt8](animated), contentType: "image/gif"))
            let jpeg = try await harness.get(harness.signedPlain("w:8", "/opaque.webp"))
            #expect(jpeg.header("Content-Type") == "image/jpeg", "WebP is not a preferred format: imgproxy writes JPEG")
            let png = try await harness.get(harness.signedPlain("w:8", "/translucent.webp"))
            #expect(png.header("Content-Type") == "image/png", "transparency: the first preferred format with alpha")
            let avifClient = [("Accept", "image/avif,image/*")]
            let stillAVIF = try await harness.get(harness.signedPlain("w:8", "/opaque.webp"), headers: avifClient)
            #expect(stillAVIF.header("Content-Type") == "image/avif")
            let gif = try await harness.get(harness.signedPlain("w:8", "/animated.gif"), headers: avifClient)
            #expect(gif.header("Content-Type") == "image/gif", "AVIF is skipped for an animation")
            #expect(try CodersManager.shared.decode(gif.body).frames.count > 1, "and its frames are kept")
            let enforced = try await harness.get(
                harness.signedPlain("w:8", "/opaque.webp", extension: "png"), headers: [("Accept", "image/webp")])
            #expect(enforced.header("Content-Type") == "image/webp" && enforced.header("Vary") == "Accept")
            let asked = try await harness.get(harness.signedPlain("w:8", "/opaque.webp", extension: "png"))
            #expect(asked.header("Content-Type") == "image/png")
        }
    }
}

/// `IMGPROXY_MAX_ANIMATION_FRAMES`: imgproxy loads `min(pages, max)` frames
/// (`reloadImageForProcessing` in `processing/processing.go`) and treats a source as animated
/// only when the limit is over 1.
@Suite("Animation frame limit")
struct AnimationFrameLimitTests {
    @Test("a longer animation keeps its first frames; a limit of 1 makes a still")
    func firstFramesKept() async throws {
        let animation = try Fixture.data("animated.gif")
        let frames = try CodersManager.shared.decode(animation).frames.count
        #expect(frames > 2)
        for (limit, expected) in [(2, 2), (1, 1)] {
            var configuration = ServerHarness.configuration()
            configuration.maximumAnimationFrames = limit
            try await ServerHarness.inProcess(configuration) { harness throws in
                harness.origin.route("/a.gif", .ok([UInt8](animation), contentType: "image/gif"))
                let answer = try await harness.get(harness.signedPlain("w:10", "/a.gif"))
                #expect(answer.status == 200 && answer.header("Content-Type") == "image/gif")
                #expect(try CodersManager.shared.decode(answer.body).frames.count == expected, "limit \(limit)")
            }
        }
        var options = DecodeOptions()
        options.maximumFrames = 2
        let cut = try CodersManager.shared.decode(animation, options: options)
        #expect(cut.frames.count == 2 && cut.warnings.contains("kept the first 2 of \(frames) frames: the frame limit"))
    }
}

/// imgproxy's path settings: `options/parser/url.go` (`preprocessURL`: replacements, then the
/// base URL unless already there; `decodeBase64URL`: a file name segment dropped),
/// `options/parser/processing_options.go` (`parsePathPresets`, `applyURLOptions`' allowed names,
/// a forbidden one answered as an invalid URL, 404) and `env/parsers.go` (`parseURLReplacements`,
/// `RegexpFromPattern`).
@Suite("Path settings", .serialized)
struct PathSettingsTests {
    let jpeg: [UInt8]

    init() throws {
        jpeg = [UInt8](try Fixture.data("gradient.jpg"))
    }

    @Test("URL replacements: wildcard patterns at the start, greedy groups, $1 and ${1}; then the base URL")
    func rewriting() throws {
        let rules = try SourceRewriting.replacements(parsing: "s3://*/=https://$1.s3.test/;img://=${2}https://images.test/")
        let replacing = SourceRewriting(replacements: rules)
        #expect(replacing.apply("s3://bucket/a/b.png") == "https://bucket.s3.test/a/b.png")
        #expect(replacing.apply("img://x.png") == "https://images.test/x.png", "a group that does not exist is empty")
        let based = SourceRewriting(baseURL: "https://base.test/")
        #expect(based.apply("a/b.png") == "https://base.test/a/b.png")
        #expect(based.apply("https://base.test/c.png") == "https://base.test/c.png", "already under the base")
        // imgproxy puts the base in front of any URL not under it, a replaced one too.
        #expect(
            SourceRewriting(replacements: rules, baseURL: "https://base.test/").apply("img://x.png")
                == "https://base.test/https://images.test/x.png")
        let greedy = SourceRewriting(replacements: try SourceRewriting.replacements(parsing: "http://*.*/=[$1|$2]"))
        #expect(greedy.apply("http://a.b.c/x") == "[a.b|c]x", "each * as long as the rest allows, as Go's ([^/]*)")
        #expect(greedy.apply("http://abc/x") == "http://abc/x", "no match, no change")
        #expect(throws: ProxyError.self) { try SourceRewriting.replacements(parsing: "no-equals") }
    }

    @Test("presets name presets; one already being expanded is skipped, as imgproxy's applyPresetOption skips it")
    func nestedPresets() throws {
        let parser = OptionsParser(presets: ["a": "w:10/pr:b", "b": "h:20/pr:a", "c": "pr:a:b/q:50", "default": "pr:a"])
        let options = try parser.parse(["pr:c"])
        #expect(options.width == 10 && options.height == 20 && options.quality == 50)
        #expect(throws: ProxyError.self) { try OptionsParser(presets: ["a": "pr:missing"]).parse(["pr:a"]) }
    }

    @Test("over HTTP: base URL and replacements, base64 with a file name, only presets, allowed options, trusted signatures")
    func overHTTP() async throws {
        let origin = try await OriginServer.start()
        origin.route("/img/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
        var configuration = ServerHarness.configuration()
        configuration.sourceRewriting = SourceRewriting(
            replacements: try SourceRewriting.replacements(parsing: "local-cdn://=\(origin.url("/img/").absoluteString)"),
            baseURL: origin.url("/").absoluteString)
        configuration.base64URLIncludesFilename = true
        configuration.allowedProcessingOptions = ["w", "pr"]
        configuration.presets = ["wide": "rs:fit:40:40"]
        configuration.trustedSignatures = ["trusted"]
        try await ServerHarness.inProcess(configuration, origin: origin) { harness throws in
            let replaced = try await harness.get(harness.signer.sign("/w:10/plain/local-cdn://a.jpg@png"))
            #expect(replaced.status == 200, "\(replaced.text)")
            let based = try await harness.get(harness.signer.sign("/w:10/plain/img/a.jpg@png"))
            #expect(based.status == 200, "\(based.text)")
            let encoded = URLSigner.base64URL(Array("img/a.jpg".utf8))
            let named = try await harness.get(harness.signer.sign("/w:10/\(encoded).png/holiday.png"))
            #expect(named.status == 200 && named.header("Content-Type") == "image/png", "\(named.text)")
            let forbidden = try await harness.get(harness.signer.sign("/h:10/plain/img/a.jpg"))
            #expect(forbidden.status == 404 && forbidden.text.contains("h is not allowed"), "\(forbidden.text)")
            let viaPreset = try await harness.get(harness.signer.sign("/pr:wide/plain/img/a.jpg@png"))
            #expect(viaPreset.status == 200, "a preset may use any option")
            let trusted = try await harness.get("/trusted/w:10/plain/img/a.jpg@png")
            #expect(trusted.status == 200)
            let untrusted = try await harness.get("/untrusted/w:10/plain/img/a.jpg@png")
            #expect(untrusted.status == 403)
        }
        var presetsOnly = ServerHarness.configuration()
        presetsOnly.onlyPresets = true
        presetsOnly.presets = ["small": "w:10", "png": "f:png"]
        try await ServerHarness.inProcess(presetsOnly) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let answer = try await harness.get(harness.signer.sign("/small:png/plain/\(harness.origin.url("/a.jpg"))"))
            #expect(answer.status == 200 && answer.header("Content-Type") == "image/png", "\(answer.text)")
            #expect(try CodersManager.shared.decode(answer.body).pixelWidth == 10)
        }
    }
}

/// imgproxy's conditional headers (`httpheaders/conditionalheaders/request.go`): `ETag` and
/// `Last-Modified` on by default, each switchable; a buster in imgproxy's forms.
@Suite("Conditional headers", .serialized)
struct ConditionalHeaderTests {
    let jpeg: [UInt8]

    init() throws {
        jpeg = [UInt8](try Fixture.data("gradient.jpg"))
    }

    @Test("HTTP dates format as RFC 9110's IMF-fixdate and read back")
    func httpDates() {
        // RFC 9110 5.6.7's example.
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
        for seconds in [0, 86_399, 1_700_000_000, 4_102_444_800] {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
        }
    }

    @Test("If-Modified-Since: 304 when the source's Last-Modified is not newer; If-None-Match wins; busters change both")
    func conditions() async throws {
        let modified = "Tue, 01 Jan 2030 00:00:00 GMT"
        var configuration = ServerHarness.configuration()
        configuration.etagBuster = "v2"
        configuration.lastModifiedBuster = Date(timeIntervalSince1970: 1_900_000_000)  // after the source's
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route(
                "/a.jpg",
                OriginResponse(headers: [("Content-Type", "image/jpeg"), ("Last-Modified", modified)], body: jpeg).tagged("\"a1\""))
            let path = harness.signedPlain("w:10", "/a.jpg", extension: "png")
            let first = try await harness.get(path)
            let etag = try #require(first.header("ETag"))
            #expect(etag == "\"v2/" + URLSigner.base64URL(Array("\"a1\"".utf8)) + "\"", "imgproxy's busted form of the source's")
            #expect(first.header("Last-Modified") == HTTPDate.format(configuration.lastModifiedBuster!))
            let later = try await harness.get(path, headers: [("If-Modified-Since", "Fri, 01 Jan 2100 00:00:00 GMT")])
            #expect(later.status == 304)
            let earlier = try await harness.get(path, headers: [("If-Modified-Since", "Mon, 01 Jan 2029 00:00:00 GMT")])
            #expect(earlier.status == 200)
            let both = try await harness.get(
                path, headers: [("If-None-Match", "\"other\""), ("If-Modified-Since", "Fri, 01 Jan 2100 00:00:00 GMT")])
            #expect(both.status == 200, "If-None-Match decides when it is sent")
            #expect(try await harness.get(path, headers: [("If-None-Match", etag)]).status == 304)
        }
        var off = ServerHarness.configuration()
        off.usesETag = false
        off.usesLastModified = false
        try await ServerHarness.inProcess(off) { harness throws in
            harness.origin.route(
                "/a.jpg", OriginResponse(headers: [("Content-Type", "image/jpeg"), ("Last-Modified", modified)], body: jpeg))
            let path = harness.signedPlain("w:10", "/a.jpg", extension: "png")
            let answer = try await harness.get(
                path, headers: [("If-None-Match", "*"), ("If-Modified-Since", "Fri, 01 Jan 2100 00:00:00 GMT")])
            #expect(answer.status == 200 && answer.header("ETag") == nil && answer.header("Last-Modified") == nil)
        }
    }
}

/// `IMGPROXY_ENABLE_CLIENT_HINTS`, as `clientfeatures/detector.go` reads the hints (the `Sec-CH-`
/// form first, a DPR in (0, 8], a positive width) and `defaultProcessingOptions` applies them
/// (dpr, and the width shrunk by it: `imath.Shrink`, rounded), before presets and the URL.
@Suite("Client hints", .serialized)
struct ClientHintsTests {
    @Test("hints become the defaults; the URL's own options win")
    func defaults() throws {
        let parser = OptionsParser()
        let hints = OptionsParser.ClientHints(dpr: ["2", "3"], width: [nil, "301"])
        #expect(hints.dpr == 2 && hints.width == 301)
        let options = try parser.parse(["q:50"], hints: hints)
        #expect(options.dpr == 2 && options.width == 151, "301 / 2 rounded")
        #expect(try parser.parse(["w:80"], hints: hints).width == 80)
        #expect(OptionsParser.ClientHints(dpr: ["9", "0", "x"], width: ["-1"]) == OptionsParser.ClientHints(dpr: [], width: []))
    }

    @Test("over HTTP: the hinted width and DPR size the result, and Vary names them")
    func overHTTP() async throws {
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))
        var configuration = ServerHarness.configuration()
        configuration.enableClientHints = true
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let path = harness.signedPlain("q:80", "/a.jpg", extension: "png")
            let hinted = try await harness.get(path, headers: [("Sec-CH-Width", "40"), ("DPR", "2")])
            #expect(try CodersManager.shared.decode(hinted.body).pixelWidth == 40, "20 CSS pixels at 2x")
            #expect(hinted.header("Vary") == "Sec-Ch-Dpr, Dpr, Sec-Ch-Width, Width")
            let plain = try await harness.get(path)
            #expect(try CodersManager.shared.decode(plain.body).pixelWidth == (try ImageHeader(data: Data(jpeg))).width)
        }
    }
}

/// The option defaults imgproxy's configuration sets (`processing/options.go`: `StripMetadata`,
/// `StripColorProfile`, `AutoRotate` read the URL's value over `po.config`'s) and its arguments
/// separator (`url_options.go`: a segment holding it is an option, split by it; presets too).
@Suite("Option defaults")
struct OptionDefaultsTests {
    @Test("server defaults under the URL's options; another arguments separator in paths and presets")
    func defaults() throws {
        var base = ProcessingOptions()
        base.stripMetadata = false
        base.autoRotate = false
        let parser = OptionsParser(presets: ["thumb": "w,10/h,20"], baseOptions: base, argumentsSeparator: ",")
        let options = try parser.parse(["rs,fill,40,30", "pr,thumb"])
        #expect(!options.stripMetadata && !options.autoRotate && options.stripColorProfile)
        #expect(options.resizingType == .fill && options.width == 10 && options.height == 20)
        #expect(try parser.parse(["sm,1"]).stripMetadata)
        #expect(try parser.parse(["sm,"]).stripMetadata == false, "an empty argument is the server's default")
        let path = try ProxyPath(parsing: "/unsafe/w,10/plain/http://a.test/x.jpg", rules: ProxyPath.Rules(argumentsSeparator: ","))
        #expect(path.options == ["w,10"] && path.source.absoluteString == "http://a.test/x.jpg")
    }
}

/// imgproxy's fallback image (`handlers/processing/request_methods.go`, `handleDownloadError`):
/// a source that cannot be fetched is replaced by the fallback image, processed with the
/// request's options, answered with the configured status (0: the source's error status) and
/// lifetime; here it is never stored as the source's result.
@Suite("Fallback image", .serialized)
struct FallbackImageTests {
    @Test("a missing source answers the fallback, processed, 200 by default; the source's status with 0; nothing cached")
    func fallback() async throws {
        let jpeg = try Fixture.data("gradient.jpg")
        var configuration = ServerHarness.configuration()
        configuration.fallbackImage = FallbackImage(source: .data(jpeg), ttl: 60)
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/missing.jpg", OriginResponse(status: 404, headers: [], body: []))
            let path = harness.signedPlain("w:16", "/missing.jpg", extension: "png")
            let answer = try await harness.get(path)
            #expect(answer.status == 200 && answer.header("Content-Type") == "image/png")
            #expect(answer.header("Cache-Control") == "public, max-age=60" && answer.header("ETag") == nil)
            #expect(try CodersManager.shared.decode(answer.body).pixelWidth == 16)
            // The source appears: the next request gets it, not a cached fallback.
            harness.origin.route("/missing.jpg", .ok([UInt8](jpeg), contentType: "image/jpeg").tagged("\"m1\""))
            let real = try await harness.get(path)
            #expect(real.status == 200 && real.header("ETag") != nil)
        }
        configuration.fallbackImage = FallbackImage(source: .data(jpeg), status: 0)
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/missing.jpg", OriginResponse(status: 404, headers: [], body: []))
            let answer = try await harness.get(harness.signedPlain("w:16", "/missing.jpg", extension: "png"))
            #expect(answer.status == 404 && answer.header("Content-Type") == "image/png", "the source's status, the fallback's body")
        }
    }
}

/// imgproxy's source request settings: `IMGPROXY_USER_AGENT` and `IMGPROXY_IGNORE_SSL_VERIFICATION`
/// (`fetcher/transport/config.go`).
@Suite("Source requests", .serialized)
struct SourceRequestTests {
    @Test("the configured User-Agent reaches the origin; an unverifiable certificate is refused unless verification is off")
    func userAgentAndTLS() async throws {
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))
        var configuration = ServerHarness.configuration()
        configuration.userAgent = "imgproxy/3.0"
        let tlsOrigin = try await OriginServer.start(tls: true)
        try await ServerHarness.inProcess(configuration, origin: tlsOrigin) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let refused = try await harness.get(harness.signedPlain("w:10", "/a.jpg", extension: "png"))
            #expect(refused.status == 502, "\(refused.text)")
        }
        configuration.ignoresSSLVerification = true
        let second = try await OriginServer.start(tls: true)
        try await ServerHarness.inProcess(configuration, origin: second) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let answer = try await harness.get(harness.signedPlain("w:10", "/a.jpg", extension: "png"))
            #expect(answer.status == 200, "\(answer.text)")
            #expect(harness.origin.requests(to: "/a.jpg").first?.header("User-Agent") == "imgproxy/3.0")
        }
    }
}
