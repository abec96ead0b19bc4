import Foundation
import Hummingbird
import HummingbirdTesting
import NIOSSL
import Logging
import Testing
import WebImage
import WebImageServer
import WebImageTesting
import WebImageTestSupport

// The README's examples and the DocC articles' (Sources/*/*.docc), verbatim, so that they keep compiling.

func describe(_ bytes: [UInt8]) -> String {
    guard let format = ImageFormat(sniffing: bytes) else { return "not an image" }
    do {
        let header = try ImageHeader(data: bytes)
        return "\(format.mimeType), \(header.width)x\(header.height)"
    } catch {
        return "\(format.rawValue): \(error.code)"  // .decodeFailed, .unsupportedFormat, ...
    }
}

func decodeLeniently(_ bytes: Data) throws -> (Image, isComplete: Bool) {
    let image = try CodersManager.shared.decode(bytes, options: DecodeOptions(acceptsTruncatedImages: true))
    for warning in image.warnings { print("worked around:", warning) }  // "Corrupt JPEG data: 3 extraneous bytes before marker 0xdb"
    return (image, !image.isPartial)
}

func reencodeKeepingEverything(_ bytes: Data, as format: ImageFormat) throws -> Data {
    let options = DecodeOptions(keepsColorProfile: true, keepsEXIF: true)
    let image = try CodersManager.shared.decode(bytes, options: options)
    print(image.colorProfile?.count ?? 0, "bytes of ICC profile;", image.exif?.count ?? 0, "of EXIF")
    return try CodersManager.shared.encode(image, as: format, options: EncodeOptions(lossless: true))
}

func poster(of video: Data, at second: Double) throws -> Image {
    var options = DecodeOptions()
    options.video = VideoFrameSelection(second: second)
    return try CodersManager.shared.decode(video, options: options)  // unsupportedFormat without the Video trait
}

func cacheThumbnail(_ bytes: Data, for url: String) throws -> Data? {
    let cache = try DiskCache(
        namespace: "thumbnails",
        configuration: DiskCacheConfiguration(sizeLimit: 256 * 1024 * 1024, maximumAge: .seconds(3 * 24 * 3600))
    )
    try cache.store(bytes, for: url, metadata: DiskCacheMetadata(contentType: "image/jpeg", etag: "\"v1\""))
    print(cache.metadata(for: url)?.etag ?? "none", cache.totalSize, cache.path(for: url).path)
    return try cache.data(for: url)
}

let memory = MemoryCache<[UInt8]>(configuration: MemoryCacheConfiguration(costLimit: 64 * 1024 * 1024))

func remember(_ pixels: [UInt8], for url: String) -> [UInt8]? {
    let key = CacheKey(url, thumbnail: ThumbnailSize(width: 300, height: 200))
    memory.insert(pixels, for: key, cost: pixels.count)
    return memory.value(for: key)  // a lock and a lookup; no allocation
}

func loadCached(_ url: String, cache: ImageCache, fetch: (String) async throws -> Data) async throws -> Image {
    let key = CacheKey(url)
    if let image = await cache.query(key).image { return image }  // memory, then disk
    let data = try await fetch(url)
    let image = try CodersManager.shared.decode(data)
    try await cache.store(image, data: data, for: key)  // memory and disk
    return image
}

func avatar(from image: Image) throws -> Image? {
    let spec = try TransformSpec.parse("resize:128x128:aspectfill,round:64")
    return spec.transform(image, forKey: "avatar")
}

func avatar(_ url: URL, manager: ImageManager = .shared) async throws -> Image? {
    var context = LoadContext()
    context.imageThumbnailPixelSize = (width: 128, height: 128)  // decoded at about this size
    context.imageTransformer = try TransformSpec.parse("resize:128x128:aspectfill,round:64")
    let result = try await manager.image(for: url, options: [.retryFailed], context: context)
    return result.image  // result.cacheType: .memory, .disk or .none
}

func renderedChart(_ url: URL, manager: ImageManager = .shared) async throws -> Image? {
    var request = ImageRequest(url: url, options: [.retryFailed])
    request.method = "POST"  // any method; only GET downloads resume, POST is never retried
    request.headers = [("Content-Type", "application/json")]  // replaces the downloader's of that name
    request.body = Data(#"{"series":[1,2,3]}"#.utf8)
    request.timeout = .seconds(5)  // the whole attempt
    request.transformer = try TransformSpec.parse("resize:256x256:aspectfit")
    return try await manager.image(for: request).image
}

final class AvatarView: ImageTarget {
    let imageLoadState = ImageTargetState()
    let shown = Locked<Image?>(nil)

    func setImage(_ image: Image?, data: Data?, cacheType: ImageCacheType, url: URL?, forKey key: String) {
        shown.withLock { $0 = image }  // draw it
    }
}

func show(_ urls: [URL], in views: [AvatarView], manager: ImageManager) {
    var context = LoadContext()
    context.customManager = manager
    for (url, view) in zip(urls, views) {
        view.setImage(with: url, placeholder: nil, context: context)  // a newer URL cancels the older load
    }
    ImagePrefetcher(manager: manager).prefetch(urls.map { $0.appendingPathComponent("next") })
}

/// Warms the cache with every URL the source hands over, two at a time; a URL that fails is skipped.
func warm(_ urls: AsyncStream<URL>, manager: ImageManager) async throws {
    let prefetcher = ImagePrefetcher(manager: manager)
    prefetcher.maxConcurrentPrefetchCount = 2
    try await prefetcher.prefetch(urls) { url in
        { _ = try? await manager.image(for: url, options: .lowPriority) }
    }
}

func posterAndLength(of animation: Data) throws -> (Image?, Duration) {
    guard let coder = try CodersManager.shared.animatedImageProvider(for: animation, maximumBufferedFrames: 3) else {
        return (try CodersManager.shared.decode(animation), .zero)  // a still image
    }
    let total = (0..<coder.frameCount).reduce(Duration.zero) { $0 + coder.duration(at: $1) }
    return (Image(pixels: try coder.frame(at: 0)), total)  // only frame 0 is composed
}

/// Partial images of a download that arrives in `pieces`, each time the picture has improved.
func previews(of pieces: [Data]) -> [Image] {
    var received = Data()
    var coder: (any IncrementalImageDecoder)?
    return pieces.compactMap { piece in
        received.append(piece)
        coder = coder ?? CodersManager.shared.incrementalDecoder(for: received)
        return coder?.update(received)  // nil: nothing new yet
    }
}

func makeServerDownloader(trusting internalCA: String) throws -> ImageDownloader {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.additionalTrustRoots = [.file(internalCA)]  // a private PKI's root
    let configuration = ImageDownloaderConfiguration(
        maximumConcurrentDownloads: 32,
        hostPoliteness: HostPoliteness(maximumConcurrentDownloadsPerHost: 4, requestsPerSecond: 10),
        redirectHandler: { hop in hop.to.scheme == "https" ? .follow : .refuse },
        addressPolicy: AddressPolicy(deniedHosts: [".internal.example"]),  // and every non-public address
        proxy: ProxySettings.fromEnvironment(),  // $https_proxy, $no_proxy, as curl
        tlsConfiguration: tls
    )
    return ImageDownloader(configuration: configuration)
}

func fetchAvatar(_ url: URL, cachedETag: String?) async throws -> Data? {
    let downloader = ImageDownloader.shared
    let options = LoadRequestOptions(priority: .high, validators: HTTPValidators(etag: cachedETag, lastModified: nil))
    do {
        let loaded = try await downloader.loadData(url, options: options)
        return loaded.isStorable ? loaded.data : nil  // ETag, Last-Modified, metrics ride along
    } catch let error where error.code == .notModified {
        return nil  // keep the cached copy
    }
}

func shouldRetry(_ error: WebImageError) -> Bool {
    switch error.code {
    case .badStatus(404), .notAnImage: false
    default: error.isTransient
    }
}

func exampleOrigin(png: [UInt8]) async throws {
    let origin = try await OriginServer.start()
    origin.route("/cat.png", OriginResponse(headers: [("Content-Type", "image/png")], body: png, etag: "\"v1\""))
    origin.route("/slow.png", OriginResponse(body: png, delivery: .drip(bytes: 512, every: .milliseconds(20))))
    origin.route("/flaky.png", sequence: [.retryAfter(seconds: 1, status: 503), .ok(png, contentType: "image/png")])
    // ... load origin.url("/cat.png") with the code under test ...
    print(origin.requestCount("/cat.png"))
    try await origin.shutdown()
}

func signedProxyPath() -> String {
    let signer = URLSigner(keys: [SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")!])
    let path = signer.sign("/rs:fit:512:512/q:80/plain/https://cdn.example.org/a.jpg@webp")
    return path
}

func imageApplication(configuration: ImageServerConfiguration) throws -> (ImageProxy, Application<RouterResponder<BasicRequestContext>>) {
    let proxy = try ImageProxy(configuration: configuration)
    let router = Router()
    router.get("/hello") { _, _ in "hello\n" }
    // Middleware applies to the routes added after it and to paths no route takes: /images/... here.
    router.add(middleware: ImageProxyMiddleware(proxy: proxy, prefix: "/images"))
    return (proxy, Application(router: router))
}

@Suite("README examples")
struct ReadmeExamplesTests {
    @Test("signedProxyPath() signs with the first key, as imgproxy does")
    func signing() throws {
        let path = signedProxyPath()
        let parsed = try ProxyPath(parsing: Substring(path))
        #expect(parsed.source.absoluteString == "https://cdn.example.org/a.jpg")
        #expect(
            URLSigner(keys: [SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")!]).isValid(parsed.signature, for: parsed.signedPath))
        #expect(parsed.signature.count == 43)
    }

    @Test("describe() names the format and size")
    func describeExample() throws {
        #expect(describe(Array(try Fixture.data("gradient.jpg"))) == "image/jpeg, 64x48")
        #expect(describe(Array("<html>".utf8)) == "not an image")
        #expect(describe([0x89, 0x50, 0x4E, 0x47]) == "png: decodeFailed")
    }

    @Test("reencodeKeepingEverything() keeps translucent pixels, the colour profile and the EXIF")
    func reencodeKeepsEverything() throws {
        let translucent = try Fixture.data("alpha/translucent-rgba.png")
        let webP = try reencodeKeepingEverything(translucent, as: .webP)
        #expect(try CodersManager.shared.decode(webP).pixels == (try CodersManager.shared.decode(translucent)).pixels)
        let p3 = try reencodeKeepingEverything(try Fixture.data("color/p3.jpg"), as: .png)
        #expect(try CodersManager.shared.decode(p3, options: DecodeOptions(keepsColorProfile: true)).colorProfile != nil)
        let turned = try reencodeKeepingEverything(try Fixture.data("oriented-right.jpg"), as: .png)
        #expect(try CodersManager.shared.decode(turned, options: DecodeOptions(keepsEXIF: true)).exif != nil)
    }

    @Test("poster(of:at:) takes a video's frame at a time with the Video trait, and is unsupportedFormat without it")
    func posterExample() async throws {
        let directory = try TemporaryDirectory("readme-video")
        let video = try Data(contentsOf: try await TestVideo.make("clip", in: directory))
        #if Video
        let image = try poster(of: video, at: 1.5)
        #expect(TestVideo.matches(TestVideo.color(of: image), TestVideo.colors[1]))
        #else
        #expect(throws: WebImageError(.unsupportedFormat)) { try poster(of: video, at: 1.5) }
        #endif
    }

    @Test("decodeLeniently() decodes a JPEG with stray bytes whole, and what arrived of one cut short")
    func lenientExample() throws {
        let (junk, junkComplete) = try decodeLeniently(try Fixture.data("quirks/jpeg-junk-before-dqt.jpg"))
        #expect(junkComplete && junk.warnings.first?.contains("extraneous bytes before marker 0xdb") == true)
        let (cut, cutComplete) = try decodeLeniently(try Fixture.data("quirks/jpeg-truncated.jpg"))
        #expect(!cutComplete && cut.pixelWidth == 40)
    }

    @Test("cacheThumbnail() stores in the namespace's directory and reads back")
    func diskCacheExample() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        setenv("XDG_CACHE_HOME", home.path, 1)
        defer { unsetenv("XDG_CACHE_HOME") }
        let bytes = Data("jpeg bytes".utf8)
        #expect(try cacheThumbnail(bytes, for: "https://x.com/readme.jpg") == bytes)
        #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent("webimage/thumbnails/journal").path))
    }

    @Test("loadCached() fetches once, then answers from the cache")
    func imageCacheExample() async throws {
        let directory = try TemporaryDirectory()
        let cache = ImageCache(disk: try DiskCache(directory: directory.url))
        let fetches = Locked(0)
        let fetch: (String) async throws -> Data = { _ in
            fetches.withLock { $0 += 1 }
            return try Fixture.data("gradient-rgba.png")
        }
        #expect(try await loadCached("https://x.com/a.png", cache: cache, fetch: fetch).pixelWidth == 64)
        #expect(try await loadCached("https://x.com/a.png", cache: cache, fetch: fetch).pixelWidth == 64)
        #expect(fetches.withLock { $0 } == 1)
    }

    @Test("fetchAvatar() downloads, then keeps the cached copy on 304")
    func downloaderExample() async throws {
        let origin = try await OriginServer.start()
        let png = Array(try Fixture.data("gradient-rgba.png"))
        origin.route("/me.png", OriginResponse(headers: [("Content-Type", "image/png")], body: png, etag: "\"7\""))
        #expect(try await fetchAvatar(origin.url("/me.png"), cachedETag: nil) == Data(png))
        #expect(try await fetchAvatar(origin.url("/me.png"), cachedETag: "\"7\"") == nil)
        #expect(origin.requests(to: "/me.png").last?.header("If-None-Match") == "\"7\"")
        try await origin.shutdown()
    }

    @Test(
        "imageApplication(configuration:) serves its own route beside the proxy under /images (HummingbirdTesting, live on 127.0.0.1, as the application runs)"
    )
    func embeddedProxyExample() async throws {
        let origin = try await OriginServer.start()
        origin.route("/photo.jpg", .ok(Array(try Fixture.data("gradient.jpg")), contentType: "image/jpeg"))
        let directory = try TemporaryDirectory()
        var configuration = ServerHarness.configuration()
        configuration.cacheDirectory = directory.url
        let (proxy, application) = try imageApplication(configuration: configuration)
        let signed = URLSigner(keys: [ServerHarness.exampleKey]).sign("/rs:fit:32:32/plain/\(origin.url("/photo.jpg").absoluteString)@png")
        try await application.test(.live) { client in
            try await client.execute(uri: "/hello", method: .get) { response in
                #expect(response.status == .ok && String(buffer: response.body) == "hello\n")
            }
            try await client.execute(uri: "/images" + signed, method: .get) { response in
                #expect(response.status == .ok && response.headers[.contentType] == "image/png")
                let header = try ImageHeader(data: Data(buffer: response.body))
                #expect(max(header.width, header.height) == 32)
            }
            try await client.execute(uri: "/images" + signed, method: .head) { response in
                #expect(response.status == .ok && response.body.readableBytes == 0 && response.headers[.contentLength] != nil)
            }
            try await client.execute(uri: "/images/unsafe/w:10/plain/http://127.0.0.1/a.jpg", method: .get) { response in
                #expect(response.status == .forbidden, "unsigned paths are refused as the server refuses them")
            }
            try await client.execute(uri: "/elsewhere", method: .get) { response in
                #expect(response.status == .notFound, "outside the prefix the application's router answers")
            }
        }
        #expect(origin.requestCount("/photo.jpg") == 1, "the HEAD was answered from the result cache")
        await proxy.shutdown()
        try await origin.shutdown()
    }

    @Test("makeServerDownloader(trusting:) refuses the loopback origin and a plain-HTTP redirect")
    func serverDownloaderExample() async throws {
        let directory = try TemporaryDirectory()
        let ca = directory.url.appendingPathComponent("ca.pem")
        try Data(try TestCertificate.certificatePEM().utf8).write(to: ca)
        let downloader = try makeServerDownloader(trusting: ca.path)
        let origin = try await OriginServer.start()
        origin.route("/a.png", .ok(Array(try Fixture.data("gradient-rgba.png")), contentType: "image/png"))
        await #expect(throws: WebImageError(.refusedAddress)) { try await downloader.loadData(origin.url("/a.png")) }
        #expect(origin.requestCount("/a.png") == 0)
        try await downloader.shutdown()
        try await origin.shutdown()
    }

    @Test("avatar(_:manager:) loads a round 128x128 thumbnail through the manager")
    func managerExample() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/face.png")
            let image = try #require(try await avatar(harness.origin.url("/face.png"), manager: try harness.makeManager()))
            #expect(image.pixelWidth == 128 && image.pixelHeight == 128 && image.pixels.pixel(x: 0, y: 0).alpha == 0)
        }
    }

    @Test("renderedChart(_:manager:) posts its body and scales the answer")
    func imageRequestExample() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/chart")
            let image = try #require(try await renderedChart(harness.origin.url("/chart"), manager: try harness.makeManager()))
            #expect(image.pixelWidth == 256 && harness.origin.requests(to: "/chart").first?.body == Array(#"{"series":[1,2,3]}"#.utf8))
        }
    }

    @Test("show(_:in:manager:) puts each image in its view (memory hits arrive before setImage returns)")
    func targetExample() async throws {
        try await ManagerHarness.run { harness in
            let urls = [harness.origin.url("/one.png"), harness.origin.url("/two.png")]
            let manager = try harness.makeManager()
            for url in urls {
                harness.servePNG(url.path)
                _ = try await manager.image(for: url)
            }
            let views = [AvatarView(), AvatarView()]
            show(urls, in: views, manager: manager)
            #expect(views.allSatisfy { $0.shown.withLock { $0?.pixelWidth } == 64 })
            #expect(views.map { $0.currentImageURL() } == urls)
        }
    }

    @Test("warm(_:manager:) loads every URL of an async source into the cache, skipping one that fails")
    func asyncPrefetchExample() async throws {
        try await ManagerHarness.run { harness in
            let paths = ["/w1.png", "/w2.png", "/w3.png"]
            for path in paths { harness.servePNG(path) }
            harness.origin.route("/gone.png", .status(404))
            let manager = try harness.makeManager()
            let urls = AsyncStream<URL> { continuation in
                for path in paths + ["/gone.png"] { continuation.yield(harness.origin.url(path)) }
                continuation.finish()
            }
            try await warm(urls, manager: manager)
            for path in paths {
                #expect(try await manager.image(for: harness.origin.url(path), options: .fromCacheOnly).cacheType == .memory)
            }
            #expect(harness.origin.requests(to: "/gone.png").count == 1)
        }
    }

    @Test("posterAndLength(of:) reads an animation's first frame and total time, and a still's image")
    func animatedCoderExample() throws {
        let (poster, length) = try posterAndLength(of: try Fixture.data("animated.gif"))
        #expect(poster?.pixelWidth == 32 && length == .milliseconds(300))
        let (still, none) = try posterAndLength(of: try Fixture.data("gradient.jpg"))
        #expect(still?.pixelWidth == 64 && none == .zero)
    }

    @Test("previews(of:) shows a progressive JPEG scan by scan, ending with the whole image")
    func progressiveCoderExample() throws {
        let data = try Fixture.data("large-progressive.jpg")
        let pieces = stride(from: 0, to: data.count, by: 1024).map { data[$0..<min($0 + 1024, data.count)] }
        let shown = previews(of: pieces.map { Data($0) })
        #expect(shown.count >= 3)
        #expect(shown.last?.pixels == (try CodersManager.shared.decode(data)).pixels)
    }

    @Test("avatar() makes a round 128x128 image")
    func transformExample() throws {
        let image = Image(pixels: PixelBuffer(width: 300, height: 200, premultipliedRGBA: [UInt8](repeating: 255, count: 300 * 200 * 4)))
        let result = try #require(try avatar(from: image))
        #expect(result.pixelWidth == 128 && result.pixelHeight == 128)
        #expect(result.pixels.pixel(x: 0, y: 0).alpha == 0 && result.pixels.pixel(x: 64, y: 64).alpha == 255)
    }

    @Test("remember() returns what it stored")
    func memoryCacheExample() {
        #expect(remember([1, 2, 3], for: "https://x.com/readme.png") == [1, 2, 3])
    }

    @Test("shouldRetry() follows the transient rule")
    func retryExample() {
        #expect(!shouldRetry(WebImageError(.badStatus(404))))
        #expect(shouldRetry(WebImageError(.badStatus(503))))
        #expect(!shouldRetry(WebImageError(.notAnImage)))
    }

    @Test("the origin example runs")
    func originExample() async throws {
        try await exampleOrigin(png: Array(try Fixture.data("gradient-rgba.png")))
    }

    @Test("the telemetry example logs through the given handler")
    func telemetryExample() {
        let telemetry = Telemetry(logHandlerFactory: { label in StreamLogHandler.standardError(label: label) })
        telemetry.logger("demo").info("ready")
        #expect(telemetry.logger("demo").label == "webimage.demo")
    }
}
