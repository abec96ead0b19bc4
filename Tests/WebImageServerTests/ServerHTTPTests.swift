import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageTesting
@testable import WebImageCodecs
@testable import WebImageServer
import WebImageTestSupport

/// The proxy over real HTTP on 127.0.0.1, in front of the project's origin server.
@Suite("Server over HTTP", .serialized)
struct ServerHTTPTests {
    let png: [UInt8]
    let jpeg: [UInt8]

    init() throws {
        png = [UInt8](try Fixture.data("gradient-rgba.png"))
        jpeg = [UInt8](try Fixture.data("large-progressive.jpg"))
    }

    @Test("a signed URL is processed; a wrong or missing signature is 403; /unsafe only with allowsUnsigned")
    func signing() async throws {
        try await ServerHarness.inProcess { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let answer = try await harness.get(harness.signedPlain("rs:fill:100:50", "/photo.jpg", extension: "png"))
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type") == "image/png")
            let image = try CodersManager.shared.decode(answer.body)
            #expect((image.pixelWidth, image.pixelHeight) == (100, 50))
            let unsigned = try await harness.get("/unsafe/rs:fill:100:50/plain/\(harness.origin.url("/photo.jpg"))@png")
            #expect(unsigned.status == 403)
            #expect(unsigned.text == "invalid signature\n")
            let signed = harness.signedPlain("w:10", "/photo.jpg")
            let tampered = try await harness.get(signed.replacingOccurrences(of: "w:10", with: "w:11"))
            #expect(tampered.status == 403)
        }
        var unsigned = ServerHarness.configuration()
        unsigned.allowsUnsigned = true
        try await ServerHarness.inProcess(unsigned) { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let answer1 = try await harness.get("/unsafe/w:10/plain/\(harness.origin.url("/photo.jpg"))")
            #expect(answer1.status == 200)
        }
    }

    @Test("a source is on disk once its first answer leaves: the next variant of it is made without fetching it again")
    func sourceStoredBeforeAnswering() async throws {
        try await ServerHarness.inProcess { harness in
            harness.origin.route(
                "/photo.jpg", OriginResponse(headers: [("Content-Type", "image/jpeg"), ("Cache-Control", "max-age=3600")], body: jpeg))
            let first = try await harness.get(harness.signedPlain("w:30", "/photo.jpg", extension: "png"))
            #expect(first.status == 200)
            #expect(harness.server.proxy.fetcher.remote.cache.disk?.count == 1, "stored before the answer, not in the background")
            let second = try await harness.get(harness.signedPlain("w:40", "/photo.jpg", extension: "png"))
            #expect(second.status == 200)
            #expect(harness.origin.requestCount("/photo.jpg") == 1)
            let metrics = try await harness.get("/metrics").text
            #expect(metrics.contains("webimage_server_cache_lookups_total{tier=\"source\",result=\"hit\"} 1"))
        }
    }

    @Test("the result is the library's own transform of the same image, pixel for pixel")
    func matchesLibrary() async throws {
        try await ServerHarness.inProcess { harness in
            harness.origin.route("/a.png", .ok(png, contentType: "image/png"))
            let options = "rs:fill:40:40/g:nowe/bl:1/sh:0.5/pix:2/pd:2:3/bg:ff0000"
            let answer = try await harness.get(harness.signedPlain(options, "/a.png", extension: "png"))
            #expect(answer.status == 200)
            let served = try CodersManager.shared.decode(answer.body)

            let source = try CodersManager.shared.decode(Data(png))
            let steps: [any ImageTransformer] = [
                ResizingTransformer(width: 53, height: 40, mode: .fill), CroppingTransformer(x: 0, y: 0, width: 40, height: 40),
                BlurTransformer(radius: 1), SharpeningTransformer(sigma: 0.5), PixelatingTransformer(blockSize: 2),
                CanvasTransformer(width: 46, height: 44, x: 3, y: 2, color: .clear),
                BackgroundTransformer(color: RGBAColor(red: 255, green: 0, blue: 0)),
            ]
            let expected = try #require(PipelineTransformer(steps).transform(source, forKey: ""))
            #expect((served.pixelWidth, served.pixelHeight) == (46, 44))
            #expect(served.pixels == expected.pixels)
        }
    }

    @Test("results are sRGB without metadata by default; scp:0 keeps and embeds the profile, sm:0 writes the EXIF")
    func colorProfileAndMetadata() async throws {
        try await ServerHarness.inProcess { harness in
            harness.origin.route("/p3.jpg", .ok([UInt8](try Fixture.data("color/p3.jpg")), contentType: "image/jpeg"))
            harness.origin.route("/turned.jpg", .ok([UInt8](try Fixture.data("oriented-right.jpg")), contentType: "image/jpeg"))
            let keep = DecodeOptions(keepsColorProfile: true, keepsEXIF: true)
            let plain = try await harness.get(harness.signedPlain("rs:fit:32:32", "/p3.jpg", extension: "png"))
            let stripped = try CodersManager.shared.decode(plain.body, options: keep)
            #expect(plain.status == 200 && stripped.colorProfile == nil && stripped.exif == nil)
            let kept = try await harness.get(harness.signedPlain("rs:fit:32:32/scp:0", "/p3.jpg", extension: "png"))
            #expect(try CodersManager.shared.decode(kept.body, options: keep).colorProfile == (try Fixture.data("color/display-p3.icc")))
            // Converted either way: the server's sRGB result and a browser's conversion of the kept one agree.
            let difference = largestChannelDifference(
                try CodersManager.shared.decode(kept.body).pixels, try CodersManager.shared.decode(plain.body).pixels)
            #expect(difference <= 2)
            let exif = try await harness.get(harness.signedPlain("rs:fit:32:32/sm:0", "/turned.jpg", extension: "jpg"))
            let written = try CodersManager.shared.decode(exif.body, options: keep)
            #expect(written.exif != nil && written.orientation == .up)
        }
    }

    @Test("a JPEG the decoder scales by quarters is cut to the planned size, not resampled a second time")
    func decoderRoundingIsCut() async throws {
        // 400x265 at 1/4 is 100x66.25: the plan says 100x66, the DCT gives 100x67.
        var straight: [UInt8] = []
        for y in 0..<265 {
            for x in 0..<400 { straight += [UInt8(x * 255 / 399), UInt8(y * 255 / 264), 90, 255] }
        }
        let photo = try CodersManager.shared.encode(Image(pixels: PixelBuffer(width: 400, height: 265, straightRGBA: straight)), as: .jpeg)
        var quarter = DecodeOptions()
        quarter.thumbnail = ThumbnailSize(width: 100, height: 66, preservesAspectRatio: false, resamples: false)
        let decoded = try CodersManager.shared.decode(photo, options: quarter)
        #expect((decoded.pixelWidth, decoded.pixelHeight) == (100, 67), "the decoder's step, left as it is")
        let expected = try #require(CroppingTransformer(x: 0, y: 0, width: 100, height: 66).transform(decoded, forKey: ""))
        try await ServerHarness.inProcess { harness in
            harness.origin.route("/photo.jpg", .ok([UInt8](photo), contentType: "image/jpeg"))
            let answer = try await harness.get(harness.signedPlain("rs:fit:100:100", "/photo.jpg", extension: "png"))
            #expect(answer.status == 200)
            let served = try CodersManager.shared.decode(answer.body)
            #expect((served.pixelWidth, served.pixelHeight) == (100, 66))
            #expect(served.pixels == expected.pixels)
        }
    }

    @Test("Accept negotiates WebP with Vary when the URL names no format; an explicit format wins without Vary")
    func negotiation() async throws {
        var negotiating = ServerHarness.configuration()
        negotiating.autoWebP = true
        try await ServerHarness.inProcess(negotiating) { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg").tagged("\"p1\""))
            let path = harness.signedPlain("w:50", "/photo.jpg")
            let webp = try await harness.get(path, headers: [("Accept", "image/avif,image/webp,*/*")])
            #expect(webp.header("Content-Type") == "image/webp")
            #expect(webp.header("Vary") == "Accept")
            let plain = try await harness.get(path, headers: [("Accept", "image/*")])
            #expect(plain.header("Content-Type") == "image/jpeg")
            #expect(plain.header("Vary") == "Accept")
            // imgproxy v4's ETag is the source's, whatever the format; `Vary: Accept` keeps the two
            // apart in a cache (v3 hashed the options and the format into it).
            #expect(webp.header("ETag") == "\"p1\"" && plain.header("ETag") == "\"p1\"")
            let explicit = try await harness.get(
                harness.signedPlain("w:50", "/photo.jpg", extension: "png"), headers: [("Accept", "image/webp")])
            #expect(explicit.header("Content-Type") == "image/png")
            #expect(explicit.header("Vary") == nil)
        }
    }

    @Test("--auto-avif answers AVIF to a client that takes it, WebP to one that takes only WebP")
    func avifNegotiation() async throws {
        var negotiating = ServerHarness.configuration()
        negotiating.autoWebP = true
        negotiating.autoAVIF = true
        try await ServerHarness.inProcess(negotiating) { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg").tagged("\"p1\""))
            let path = harness.signedPlain("w:50", "/photo.jpg")
            let avif = try await harness.get(path, headers: [("Accept", "image/avif,image/webp,*/*")])
            #expect(avif.header("Content-Type") == "image/avif" && avif.header("Vary") == "Accept")
            let image = try CodersManager.shared.decode(avif.body)
            #expect(image.sourceFormat == .avif && image.pixelWidth == 50)
            let webp = try await harness.get(path, headers: [("Accept", "image/webp,*/*")])
            #expect(webp.header("Content-Type") == "image/webp")
            let explicit = try await harness.get(harness.signedPlain("w:50", "/photo.jpg", extension: "avif"))
            #expect(explicit.status == 200 && explicit.header("Content-Type") == "image/avif")
        }
    }

    @Test("--auto-jxl answers JPEG XL before AVIF to a client that takes both; the source's own format to one that takes neither")
    func jxlNegotiation() async throws {
        var negotiating = ServerHarness.configuration()
        negotiating.autoAVIF = true
        negotiating.autoJXL = true
        try await ServerHarness.inProcess(negotiating) { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg").tagged("\"p1\""))
            let path = harness.signedPlain("w:50", "/photo.jpg")
            let jxl = try await harness.get(path, headers: [("Accept", "image/jxl,image/avif,*/*")])
            #expect(jxl.header("Content-Type") == "image/jxl" && jxl.header("Vary") == "Accept")
            let image = try CodersManager.shared.decode(jxl.body)
            #expect(image.sourceFormat == .jpegXL && image.pixelWidth == 50)
            let avif = try await harness.get(path, headers: [("Accept", "image/avif,*/*")])
            #expect(avif.header("Content-Type") == "image/avif")
            let plain = try await harness.get(path, headers: [("Accept", "*/*")])
            #expect(plain.header("Content-Type") == "image/jpeg" && plain.header("Vary") == "Accept")
        }
    }

    @Test("a URL that expires is cached in front for no longer than it lives: max-age is cut to what is left of expires")
    func maximumAgeFollowsExpires() async throws {
        try await ServerHarness.inProcess { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg").tagged("\"p1\""))
            let inAnHour = Int(Date().timeIntervalSince1970) + 3600
            let answer = try await harness.get(harness.signedPlain("w:20/exp:\(inAnHour)", "/photo.jpg", extension: "png"))
            #expect(answer.status == 200, "\(answer.text)")
            let maximumAge = try #require(answer.header("Cache-Control")?.split(separator: "=").last.flatMap { Int($0) })
            #expect((3500...3600).contains(maximumAge), "\(maximumAge)")
            let revalidated = try await harness.get(
                harness.signedPlain("w:20/exp:\(inAnHour)", "/photo.jpg", extension: "png"),
                headers: [("If-None-Match", answer.header("ETag") ?? "")])
            #expect(revalidated.status == 304)
            // The 304 carries the age left at its own moment: the same, or less by the seconds
            // that passed between the two requests (a second boundary may fall between them).
            let revalidatedAge = try #require(revalidated.header("Cache-Control")?.split(separator: "=").last.flatMap { Int($0) })
            #expect((maximumAge - 5...maximumAge).contains(revalidatedAge), "\(revalidatedAge) after \(maximumAge)")
        }
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(ResponseBuilder.maximumAge(ttl: 31_536_000, expires: nil, now: now) == 31_536_000)
        #expect(ResponseBuilder.maximumAge(ttl: 31_536_000, expires: 1_000_100, now: now) == 100)
        #expect(ResponseBuilder.maximumAge(ttl: 60, expires: 1_000_100, now: now) == 60, "the TTL when it is shorter")
        #expect(ResponseBuilder.maximumAge(ttl: 60, expires: 999_000, now: now) == 0)
    }

    @Test("ETag and If-None-Match: 304 from the result cache and, when the result is not cached, from the source alone")
    func revalidation() async throws {
        // Without the memory tier, emptying the result cache leaves the result cached nowhere.
        var diskOnly = ServerHarness.configuration()
        diskOnly.resultMemoryCacheBytes = 0
        try await ServerHarness.inProcess(diskOnly) { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg").tagged("\"p1\""))
            let path = harness.signedPlain("rs:fit:64:64/q:70", "/photo.jpg")
            let first = try await harness.get(path)
            let etag = try #require(first.header("ETag"))
            #expect(etag == "\"p1\"", "the source's (imgproxy v4)")
            #expect(first.header("Cache-Control") == "public, max-age=31536000")
            #expect(first.header("Server-Timing")?.contains("process;dur=") == true)
            let hit = try await harness.get(path, headers: [("If-None-Match", etag)])
            #expect(hit.status == 304)
            #expect(hit.body.isEmpty)
            #expect(hit.header("Server-Timing")?.contains("cache") == true)

            try harness.server.proxy.store.disk.removeAll()
            let processedBefore = harness.server.proxy.store.disk.count
            let revalidated = try await harness.get(path, headers: [("If-None-Match", "\"other\", \(etag)")])
            #expect(revalidated.status == 304)
            #expect(revalidated.header("Server-Timing") == nil, "decided by the source, not by a cache")
            #expect(harness.server.proxy.store.disk.count == processedBefore, "answered without processing or storing")
            let answer2 = try await harness.get(path, headers: [("If-None-Match", "\"stale\"")])
            #expect(answer2.status == 200)
            #expect(answer2.header("Server-Timing")?.contains("process;dur=") == true, "processed again")
        }
    }

    @Test("a result's ETag is its source's (imgproxy v4), downloaded or from the source cache, for every variant")
    func etagOfCachedSource() async throws {
        var diskOnly = ServerHarness.configuration()
        diskOnly.resultMemoryCacheBytes = 0
        try await ServerHarness.inProcess(diskOnly) { harness in
            let validated = OriginResponse(
                headers: [("Content-Type", "image/jpeg"), ("Cache-Control", "max-age=600"), ("ETag", "\"v1\"")], body: jpeg)
            harness.origin.route("/photo.jpg", validated)
            let path = harness.signedPlain("rs:fit:48:48", "/photo.jpg")
            // Downloaded, then twice from the source cache: one ETag.
            var etags: [String?] = []
            for _ in 0..<3 {
                etags.append(try await harness.get(path).header("ETag"))
                try harness.server.proxy.store.disk.removeAll()
            }
            #expect(etags == ["\"v1\"", "\"v1\"", "\"v1\""], "\(etags)")
            #expect(harness.origin.requests(to: "/photo.jpg").count == 1, "the later two from the source cache")
            // Other options on the same bytes: the same ETag (v3 hashed the options into it).
            #expect(try await harness.get(harness.signedPlain("rs:fit:40:40", "/photo.jpg")).header("ETag") == "\"v1\"")
        }
    }

    @Test("HEAD has GET's headers and no body; filename and attachment set Content-Disposition")
    func headAndDisposition() async throws {
        try await ServerHarness.inProcess { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let path = harness.signedPlain("w:32/fn:holiday/att:1", "/photo.jpg", extension: "webp")
            let get = try await harness.get(path)
            let head = try await harness.get(path, method: .HEAD)
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.header("Content-Length") == String(get.body.count))
            #expect(get.header("Content-Disposition") == "attachment; filename=\"holiday.webp\"")
            #expect(head.header("ETag") == get.header("ETag"))
        }
    }

    @Test("hostile sources get the right status in bounded time, and nothing is cached")
    func hostileSources() async throws {
        var limited = ServerHarness.configuration()
        limited.maximumSourceBytes = 100_000
        // None of these sources stalls: each answer follows an event (a status, a close, a reset,
        // the byte cap, a redirect loop), so the download timeout only bounds a hang. At 5 s a
        // ThreadSanitizer run with three tests at a time and the dataset tests' children beside
        // it once took longer than that to see /truncated.jpg's close (504 instead of 502).
        limited.downloadTimeout = .seconds(20)
        try await ServerHarness.inProcess(limited) { harness in
            let origin = harness.origin
            origin.route("/missing.jpg", .status(404))
            origin.route("/broken.jpg", .status(500))
            origin.route("/page.jpg", .htmlPage())
            origin.route(
                "/truncated.jpg", OriginResponse(headers: [("Content-Type", "image/jpeg")], body: jpeg, delivery: .cutShort(after: 200)))
            origin.route("/reset.jpg", OriginResponse(headers: [("Content-Type", "image/jpeg")], body: jpeg, delivery: .reset(after: 200)))
            origin.route(
                "/huge.jpg",
                OriginResponse(
                    headers: [("Content-Type", "image/jpeg")], body: [], delivery: .generated(byteCount: 10_000_000, declaresLength: true)))
            origin.route(
                "/huge-chunked.jpg",
                OriginResponse(
                    headers: [("Content-Type", "image/jpeg")], body: [], delivery: .generated(byteCount: 10_000_000, declaresLength: false))
            )
            origin.route("/loop.jpg", .redirect(to: "/loop.jpg"))
            origin.route("/bomb.png", .ok(Self.pngDeclaring(width: 100_000, height: 100_000), contentType: "image/png"))
            origin.route("/garbage.jpg", .ok([0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 400), contentType: "image/jpeg"))
            let expectations: [(String, Int)] = [
                ("/missing.jpg", 404), ("/broken.jpg", 502), ("/page.jpg", 415), ("/truncated.jpg", 502), ("/reset.jpg", 502),
                ("/huge.jpg", 422), ("/huge-chunked.jpg", 422), ("/loop.jpg", 502), ("/bomb.png", 422),
                ("/garbage.jpg", 422),
            ]
            for (path, status) in expectations {
                let answer = try await harness.get(harness.signedPlain("w:10", path))
                #expect(answer.status == status, "\(path): \(answer.text)")
                #expect(answer.header("Content-Type") == "text/plain; charset=utf-8")
                #expect(!answer.text.isEmpty)
            }
            #expect(harness.server.proxy.store.disk.count == 0)
        }
        // A stall alone gets the short timeout: with it, a slow sanitizer build once timed out
        // the 10 MB source before its byte cap answered.
        var impatient = ServerHarness.configuration()
        impatient.downloadTimeout = .milliseconds(500)
        try await ServerHarness.inProcess(impatient) { harness in
            harness.origin.route(
                "/stalled.jpg", OriginResponse(headers: [("Content-Type", "image/jpeg")], body: jpeg, delivery: .stall(after: 100)))
            let answer = try await harness.get(harness.signedPlain("w:10", "/stalled.jpg"))
            #expect(answer.status == 504, "\(answer.text)")
            #expect(harness.server.proxy.store.disk.count == 0)
        }
    }

    @Test("loopback sources are refused before any connection unless allowed; the allow-list is checked first")
    func addressPolicy() async throws {
        var loopbackRefused = ServerHarness.configuration()
        loopbackRefused.allowsLoopbackSources = false
        try await ServerHarness.inProcess(loopbackRefused) { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let answer = try await harness.get(harness.signedPlain("w:10", "/photo.jpg"))
            #expect(answer.status == 404)
            #expect(answer.text.contains("address"))
            #expect(harness.origin.requestCount("/photo.jpg") == 0)
        }
        let origin = try await OriginServer.start()
        var allowingOrigin = ServerHarness.configuration()
        allowingOrigin.allowedSources = ["http://127.0.0.1:\(origin.port)"]
        try await ServerHarness.inProcess(allowingOrigin, origin: origin) { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let sneaky = harness.signer.sign("/w:10/plain/http://127.0.0.1@localhost:\(harness.origin.port)/photo.jpg")
            let answer3 = try await harness.get(sneaky)
            #expect(answer3.status == 404)
            let answer4 = try await harness.get(harness.signedPlain("w:10", "/photo.jpg"))
            #expect(answer4.status == 200)
            #expect(harness.origin.requestCount("/photo.jpg") == 1)
        }
        var wrongPort = ServerHarness.configuration()
        wrongPort.allowedSources = ["http://127.0.0.1:1/"]
        try await ServerHarness.inProcess(wrongPort) { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let answer = try await harness.get(harness.signedPlain("w:10", "/photo.jpg"))
            #expect(answer.status == 404)
            #expect(answer.text.contains("allowed list"))
            #expect(harness.origin.requestCount("/photo.jpg") == 0)
        }
    }

    @Test("the allow-list cannot be escaped by dot segments, encoded dots or slashes, a longer segment, or a redirect")
    func allowListEscapes() async throws {
        let origin = try await OriginServer.start()
        var allowingFolder = ServerHarness.configuration()
        allowingFolder.allowedSources = ["http://127.0.0.1:\(origin.port)/f"]
        try await ServerHarness.inProcess(allowingFolder, origin: origin) { harness in
            let base = "http://127.0.0.1:\(origin.port)"
            harness.origin.route("/f/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            harness.origin.route("/private/x.jpg", .ok(jpeg, contentType: "image/jpeg"))
            harness.origin.route("/foo/x.jpg", .ok(jpeg, contentType: "image/jpeg"))
            harness.origin.route("/f/hop.jpg", .redirect(to: "\(base)/private/x.jpg"))
            harness.origin.route("/f/inside.jpg", .redirect(to: "\(base)/f/sub/../photo.jpg"))
            /// The source as URL-safe base64, so that no escape is undone before the list sees it.
            func encoded(_ source: String, _ width: Int) -> String {
                harness.signer.sign("/w:\(width)/" + URLSigner.base64URL(Array(source.utf8)))
            }
            var width = 10
            for escape in [
                "/f/../private/x.jpg", "/f/%2e%2e/private/x.jpg", "/f/%2E%2e/private/x.jpg", "/f/.%2E/private/x.jpg",
                "/f/..%2Fprivate/x.jpg", "/f/..%5Cprivate/x.jpg", "/foo/x.jpg", "/f/./../private/x.jpg",
            ] {
                width += 1
                let answer = try await harness.get(encoded(base + escape, width))
                #expect(answer.status == 404, "\(escape): \(answer.status) \(answer.text)")
            }
            let hop = try await harness.get(encoded(base + "/f/hop.jpg", 40))
            #expect(hop.status == 404 && hop.text.contains("redirected"), "\(hop.status) \(hop.text)")
            #expect(harness.origin.requestCount("/f/hop.jpg") == 1)
            #expect(harness.origin.requestCount("/private/x.jpg") == 0 && harness.origin.requestCount("/foo/x.jpg") == 0)
            // What normalises to a path inside the folder is fetched as that path.
            for inside in ["/f/./photo.jpg", "/f/sub/../photo.jpg", "/f/%70hoto.jpg", "/f/inside.jpg"] {
                width += 1
                let answer = try await harness.get(encoded(base + inside, width))
                #expect(answer.status == 200, "\(inside): \(answer.status) \(answer.text)")
            }
            #expect(harness.origin.requests.allSatisfy { !$0.path.contains("..") && !$0.path.contains("/./") })
        }
    }

    @Test("a redirect from the one allowed origin to 127.0.0.1 is refused at the hop, before connecting")
    func redirectHopRefused() async throws {
        var namedOrigin = ServerHarness.configuration()
        namedOrigin.allowsLoopbackSources = false
        // Only the origin's name is allowed; it resolves to loopback, as DNS can make any name do.
        namedOrigin.sourceAddressPolicy = AddressPolicy(allowedHosts: ["origin.test"])
        namedOrigin.hostResolver = StaticHostResolver(["origin.test": [IPAddress("127.0.0.1")!]], fallback: nil)
        try await ServerHarness.inProcess(namedOrigin) { harness in
            let port = harness.origin.port
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            harness.origin.route("/hop.jpg", .redirect(to: "http://127.0.0.1:\(port)/photo.jpg"))
            let direct = try await harness.get(harness.signer.sign("/w:10/plain/http://origin.test:\(port)/photo.jpg"))
            #expect(direct.status == 200, "the named origin itself is allowed")
            let redirected = try await harness.get(harness.signer.sign("/w:12/plain/http://origin.test:\(port)/hop.jpg"))
            #expect(redirected.status == 404)
            #expect(redirected.text.contains("refused by the address policy (loopback"), "\(redirected.text)")
            #expect(!redirected.text.contains("127.0.0.1"), "the address a name led to is not told: \(redirected.text)")
            #expect(harness.origin.requestCount("/hop.jpg") == 1)
            #expect(harness.origin.requestCount("/photo.jpg") == 1, "the hop to 127.0.0.1 never connected")
        }
    }

    @Test("one host gets at most its limit of source downloads at once while another host is served")
    func downloadsPerHost() async throws {
        var onePerHost = ServerHarness.configuration()
        onePerHost.maximumDownloadsPerHost = 1
        onePerHost.concurrency = 4
        // The stalls end by this timeout, one after the other, when the server drains.
        onePerHost.downloadTimeout = .seconds(2)
        try await ServerHarness.inProcess(onePerHost) { harness in
            for index in 0..<2 { harness.origin.route("/stall\(index).jpg", OriginResponse(delivery: .neverRespond)) }
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let stalled = (0..<2).map { index in Task { try? await harness.get(harness.signedPlain("w:10", "/stall\(index).jpg")) } }
            try await harness.origin.waitFor("a stalled download") { event in
                guard case .requestReceived(let request) = event else { return false }
                return request.path.hasPrefix("/stall")
            }
            // The same origin by another name is another host: it is not held behind the stalls.
            let other = try await harness.get(harness.signer.sign("/w:10/plain/http://localhost:\(harness.origin.port)/photo.jpg"))
            #expect(other.status == 200)
            let stalls = harness.origin.requests.filter { $0.path.hasPrefix("/stall") }
            #expect(stalls.count == 1, "the second download from 127.0.0.1 waits for the first")
            for task in stalled { task.cancel() }
        }
    }

    @Test("processing past its timeout answers 504 and stores nothing")
    func processingTimeout() async throws {
        var impatient = ServerHarness.configuration()
        // A millisecond against a blur of radius 20 in a debug build: tens of times too short.
        impatient.processingTimeout = .milliseconds(1)
        try await ServerHarness.inProcess(impatient) { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let answer = try await harness.get(harness.signedPlain("bl:20", "/photo.jpg", extension: "png"))
            #expect(answer.status == 504)
            #expect(answer.text == "processing took longer than 0.001 seconds\n")
            #expect(harness.server.proxy.store.disk.entries().isEmpty)
        }
    }

    @Test("a source over the resolution limit is refused from its header; an animation keeps the frames the limit allows")
    func resolutionLimit() async throws {
        var tinyResolution = ServerHarness.configuration()
        tinyResolution.maximumSourceMegapixels = 0.05
        try await ServerHarness.inProcess(tinyResolution) { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let answer = try await harness.get(harness.signedPlain("w:10", "/photo.jpg"))
            #expect(answer.status == 422)
            #expect(answer.text.contains("320x240"))
        }
        var fewFrames = ServerHarness.configuration()
        fewFrames.maximumAnimationFrames = 2
        try await ServerHarness.inProcess(fewFrames) { harness in
            harness.origin.route("/animated.gif", .ok([UInt8](try Fixture.data("animated.gif")), contentType: "image/gif"))
            let answer = try await harness.get(harness.signedPlain("w:10", "/animated.gif"))
            #expect(answer.status == 200)
            #expect(try CodersManager.shared.decode(answer.body).frames.count == 2, "the first two, as imgproxy keeps them")
            let answer7 = try await harness.get(harness.signedPlain("w:10", "/animated.gif", extension: "png"))
            #expect(answer7.status == 200)
        }
    }

    @Test("recent results are served from memory in front of the disk, repeated paths without parsing; a memory size of 0 keeps none")
    func resultsInMemory() async throws {
        try await ServerHarness.inProcess { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg").tagged("\"p1\""))
            let path = harness.signedPlain("w:20", "/photo.jpg", extension: "png")
            let first = try await harness.get(path)
            try harness.server.proxy.store.disk.removeAll()
            let second = try await harness.get(path)
            #expect(second.status == 200 && second.body == first.body, "served from memory with the disk emptied")
            #expect(second.header("ETag") == first.header("ETag"))
            let revalidated = try await harness.get(path, headers: [("If-None-Match", first.header("ETag") ?? "")])
            #expect(revalidated.status == 304)
            // A path that expires is parsed every time, so that it stops working when it expires.
            let expiring = harness.signedPlain("w:20/exp:4102444800", "/photo.jpg", extension: "png")
            #expect(try await harness.get(expiring).status == 200)
            #expect(try await harness.get(expiring).status == 200)
            let metrics = try await harness.get("/metrics").text
            #expect(
                metrics.contains("webimage_server_cache_lookups_total{tier=\"path\",result=\"hit\"} 2"), "the repeats of the first path")
        }
        var diskOnly = ServerHarness.configuration()
        diskOnly.resultMemoryCacheBytes = 0
        try await ServerHarness.inProcess(diskOnly) { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let path = harness.signedPlain("w:20", "/photo.jpg", extension: "png")
            _ = try await harness.get(path)
            _ = try await harness.get(path)
            let metrics = try await harness.get("/metrics").text
            #expect(metrics.contains("webimage_server_cache_lookups_total{tier=\"result\",result=\"hit\"} 1"))
            #expect(!metrics.contains("tier=\"result-memory\",result=\"hit\"} 1"))
        }
    }

    @Test("/health, /ready and /metrics; other methods are 405")
    func operations() async throws {
        try await ServerHarness.inProcess { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let answer8 = try await harness.get("/health")
            #expect(answer8.status == 200)
            let answer9 = try await harness.get("/ready")
            #expect(answer9.text == "ready\n")
            _ = try await harness.get(harness.signedPlain("w:10", "/photo.jpg"))
            _ = try await harness.get(harness.signedPlain("w:10", "/photo.jpg"))
            let metrics = try await harness.get("/metrics").text
            #expect(metrics.contains("webimage_server_requests_total{status=\"200\"} 2"))
            #expect(metrics.contains("webimage_server_cache_lookups_total{tier=\"result-memory\",result=\"hit\"} 1"))
            #expect(metrics.contains("webimage_server_processing_duration_seconds_count 1"))
            #expect(metrics.contains("webimage_downloads_total"), "the library's metrics share the registry")
            let answer10 = try await harness.get("/health", method: .POST)
            #expect(answer10.status == 405)
        }
    }

    /// A PNG whose header declares `width` x `height` and which holds no pixels.
    static func pngDeclaring(width: UInt32, height: UInt32) -> [UInt8] {
        let header = PNGChunk(type: "IHDR", data: PNGChunk.bigEndian(width) + PNGChunk.bigEndian(height) + [8, 6, 0, 0, 0])
        return PNGChunk.signature + header.encoded + PNGChunk(type: "IEND", data: []).encoded
    }
}
