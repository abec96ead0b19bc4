import Foundation
import Testing
import WebImage
import WebImageTesting
import WebImageTestSupport

/// A target that remembers what it was shown, in order.
final class RecordingTarget: ImageTarget {
    let imageLoadState = ImageTargetState()
    let shown = Locked<[(image: Image?, url: URL?, key: String)]>([])
    let images = EventLog<Image?>()

    func setImage(_ image: Image?, data: Data?, cacheType: ImageCacheType, url: URL?, forKey key: String) {
        shown.withLock { $0.append((image, url, key)) }
        images.record(image)
    }

    var last: (image: Image?, url: URL?, key: String)? { shown.withLock { $0.last } }
}

@Suite("ImageTarget")
struct ImageTargetTests {
    static let placeholder = Image(pixels: PixelBuffer(width: 1, height: 1, premultipliedRGBA: [1, 2, 3, 255]))

    private func context(_ manager: ImageManager, key: String? = nil) -> LoadContext {
        var context = LoadContext()
        context.customManager = manager
        context.setImageOperationKey = key
        return context
    }

    @Test("the placeholder shows at once, then the image; the URL is remembered per key")
    func placeholderThenImage() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/t.png")
            let manager = try harness.makeManager()
            let target = RecordingTarget()
            let done = Deliveries()
            target.setImage(
                with: harness.origin.url("/t.png"), placeholder: Self.placeholder, context: context(manager), completed: done.completion)
            // The first thing shown, before setImage returned; on a loaded machine the image can
            // already have followed it by the time this line runs.
            #expect(target.shown.withLock { $0.first?.image } == Self.placeholder)
            #expect(target.currentImageURL() == harness.origin.url("/t.png"))
            #expect(target.defaultOperationKey == "RecordingTarget")
            _ = try await done.result().get()
            #expect(target.last?.image?.pixelWidth == 64 && target.shown.withLock { $0.count } == 2)
        }
    }

    @Test(".delayPlaceholder shows the placeholder only on failure; a nil URL shows it and reports invalidURL")
    func delayedPlaceholder() async throws {
        try await ManagerHarness.run { harness in
            harness.origin.route("/bad.png", .status(404))
            harness.origin.route("/never.png", OriginResponse(body: [], delivery: .neverRespond))
            let manager = try harness.makeManager()
            // A load that cannot finish: nothing may have been shown when setImage returns.
            let waiting = RecordingTarget()
            let pending = waiting.setImage(
                with: harness.origin.url("/never.png"), placeholder: Self.placeholder, options: .delayPlaceholder, context: context(manager)
            )
            #expect(waiting.shown.withLock { $0.isEmpty })
            pending?.cancel()
            let target = RecordingTarget()
            let done = Deliveries()
            target.setImage(
                with: harness.origin.url("/bad.png"), placeholder: Self.placeholder, options: .delayPlaceholder, context: context(manager),
                completed: done.completion)
            #expect(try await done.result().failure?.code == .badStatus(404))
            #expect(target.last?.image == Self.placeholder)

            let nilURL = Deliveries()
            target.setImage(with: nil, placeholder: Self.placeholder, context: context(manager), completed: nilURL.completion)
            #expect(try await nilURL.result().failure?.code == .invalidURL)
            #expect(target.last?.image == Self.placeholder && target.currentImageURL() == nil)
        }
    }

    @Test(".avoidAutoSetImage leaves the target alone; keys keep loads apart")
    func avoidAutoSetAndKeys() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/a.png")
            harness.origin.route("/never.png", OriginResponse(body: [], delivery: .neverRespond))
            let manager = try harness.makeManager()
            let target = RecordingTarget()
            let done = Deliveries()
            target.setImage(
                with: harness.origin.url("/a.png"), options: .avoidAutoSetImage, context: context(manager), completed: done.completion)
            #expect(try await done.result().get().image != nil)
            #expect(target.shown.withLock { $0.allSatisfy { $0.image == nil } }, "only the (nil) placeholder was shown")

            let highlighted = Deliveries()
            let pending = target.setImage(
                with: harness.origin.url("/never.png"), context: context(manager, key: "highlighted"), completed: highlighted.completion)
            target.setImage(with: harness.origin.url("/a.png"), context: context(manager, key: "normal"))
            #expect(pending?.isCancelled == false, "another key does not cancel it")
            #expect(target.currentImageURL(forKey: "highlighted") == harness.origin.url("/never.png"))
            target.setImage(with: harness.origin.url("/a.png"), context: context(manager, key: "highlighted"))
            #expect(
                pending?.isCancelled == true, "a new URL under the same key cancels the old load (finished: \(pending?.isFinished == true))"
            )
            #expect(highlighted.count == 0)
        }
    }

    /// The origin sends the header and the first scans, then stalls: whatever the machine's load,
    /// a partial image must reach the target while the rest never comes.
    @Test("partial images reach the target during a progressive load; the completion waits for the final one")
    func progressiveTarget() async throws {
        try await ManagerHarness.run { harness in
            let jpeg = try Fixture.data("large-progressive.jpg")
            harness.origin.route(
                "/p.jpg",
                OriginResponse(headers: [("Content-Type", "image/jpeg")], body: [UInt8](jpeg), delivery: .stall(after: jpeg.count * 2 / 3)))
            let target = RecordingTarget()
            let done = Deliveries()
            let operation = target.setImage(
                with: harness.origin.url("/p.jpg"), options: .progressiveLoad, context: context(try harness.makeManager()),
                completed: done.completion)
            let partial = try await target.images.waitFor(timeout: .seconds(30), "a partial image") { $0 != nil }
            #expect(partial?.pixelWidth == 320)
            #expect(done.count == 0, "partial images go to the target, not to the completion")
            operation?.cancel()
        }
    }

    /// 10,000 random sequences of sets and cancels against an origin with random delays: the
    /// target always ends with the image of the last URL set.
    @Test("a late result never overwrites a newer one")
    func lastURLWins() async throws {
        try await ManagerHarness.run { harness in
            let count = 16
            var images: [URL: [UInt8]] = [:]
            for index in 0..<count {
                let pixel = PixelBuffer(width: 1, height: 1, premultipliedRGBA: [UInt8(index), 0, 0, 255])
                let png = try CodersManager.shared.encode(Image(pixels: pixel), as: .png)
                let url = harness.origin.url("/r\(index).png")
                images[url] = pixel.bytes
                harness.origin.route("/r\(index).png") { _ in
                    OriginResponse(
                        headers: [("Content-Type", "image/png")], body: [UInt8](png), headerDelay: .microseconds(Int64.random(in: 0...3000))
                    )
                }
            }
            let urls = Array(images.keys)
            let expected = images
            let manager = ImageManager(
                cache: ImageCache(memory: MemoryCache(), disk: nil), loader: harness.downloader, coders: harness.coders)
            let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
                for batch in 0..<50 {
                    group.addTask {
                        var generator = SplitMix64(seed: UInt64(batch))
                        var mismatches = 0
                        for _ in 0..<200 {
                            if try await !Self.runSequence(urls: urls, images: expected, manager: manager, generator: &generator) {
                                mismatches += 1
                            }
                        }
                        return mismatches
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(mismatches == 0)
        }
    }

    private static func runSequence(urls: [URL], images: [URL: [UInt8]], manager: ImageManager, generator: inout SplitMix64) async throws
        -> Bool
    {
        let target = RecordingTarget()
        var context = LoadContext()
        context.customManager = manager
        let steps = Int(generator.next() % 4) + 1
        for _ in 1..<steps {
            let options: LoadOptions = generator.next() % 2 == 0 ? .fromLoaderOnly : []
            target.setImage(with: urls[Int(generator.next() % UInt64(urls.count))], options: options, context: context)
            if generator.next() % 4 == 0 { target.cancelImageLoad() }
            if generator.next() % 3 == 0 { await Task.yield() }
        }
        let last = urls[Int(generator.next() % UInt64(urls.count))]
        let done = Deliveries()
        target.setImage(with: last, options: generator.next() % 2 == 0 ? .fromLoaderOnly : [], context: context, completed: done.completion)
        _ = try await done.result().get()
        let shown = target.last
        return shown?.url == last && shown?.image?.pixels.bytes == images[last]
    }
}
