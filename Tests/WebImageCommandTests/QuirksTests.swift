import Foundation
import MetricsTestKit
import Testing
import WebImage
import WebImageTesting
import WebImageTestSupport

/// Real-world oddities browsers display (scripts/fixtures/make_quirks.py): each fixture decodes to
/// its expected reading (the intact original's where the quirk does not change pixels) and to
/// Pillow's reading of the same file where Pillow reads it, files cut short only when truncated images are accepted, and what must stay an error
/// stays one.
@Suite("Lenient decoding")
struct QuirksTests {
    struct Expectation: Decodable {
        let width: Int
        let height: Int
        let frames: [[UInt8]]
        let tolerance: Int
        /// An error whatever the options.
        let fails: Bool
        /// Cut short: an error by default, a partial image when accepted.
        let truncated: Bool
        /// Decodes with a warning.
        let warns: Bool
        /// Pillow's reading of the damaged file itself, where Pillow reads it at the same size.
        let pillow: [[UInt8]]?
    }

    static let manifest: [String: Expectation] = {
        (try? JSONDecoder().decode([String: Expectation].self, from: Fixture.data("quirks/expected.json"))) ?? [:]
    }()

    @Test func everyClassHasFixtures() {
        for prefix in ["jpeg-", "png-", "gif-", "apng-"] {
            #expect(Self.manifest.keys.contains { $0.hasPrefix(prefix) }, "no \(prefix) fixture")
        }
    }

    @Test(arguments: manifest.keys.sorted())
    func decodesAsBrowsersDo(name: String) throws {
        let expected = try #require(Self.manifest[name])
        let data = try Fixture.data("quirks/" + name)
        if expected.fails {
            for accept in [false, true] {
                #expect(throws: WebImageError.self, "\(name)") {
                    try CodersManager.shared.decode(data, options: DecodeOptions(acceptsTruncatedImages: accept))
                }
            }
            return
        }
        if expected.truncated {
            #expect(throws: WebImageError(.decodeFailed), "\(name) is cut short: an error by default") {
                try CodersManager.shared.decode(data)
            }
        }
        let image = try CodersManager.shared.decode(data, options: DecodeOptions(acceptsTruncatedImages: expected.truncated))
        #expect(image.isPartial == expected.truncated, "\(name)")
        if expected.warns || expected.truncated { #expect(!image.warnings.isEmpty, "\(name) decoded without a warning") }
        #expect(
            image.pixelWidth == expected.width && image.pixelHeight == expected.height, "\(name): \(image.pixelWidth)x\(image.pixelHeight)")
        #expect(image.frames.count == expected.frames.count, "\(name): \(image.frames.count) frames")
        for (reference, frames) in [("expected", expected.frames), ("Pillow's", expected.pillow ?? [])] {
            for (index, straight) in frames.enumerated() where index < image.frames.count {
                let ours = image.frames[index].pixels.bytes
                guard ours.count == straight.count else {
                    Issue.record("\(name) frame \(index): \(ours.count / 4) pixels against \(straight.count / 4) in the \(reference)")
                    continue
                }
                let difference = zip(ours, straight).map { abs(Int($0) - Int($1)) }.max() ?? 0
                #expect(difference <= expected.tolerance, "\(name) frame \(index): max channel difference \(difference) from \(reference)")
            }
        }
    }

    @Test("an intact file decodes with no warning and is not partial")
    func intactFilesHaveNoWarnings() throws {
        for name in ["gradient.jpg", "gradient-rgba.png", "animated.gif", "animated.png"] {
            let image = try CodersManager.shared.decode(try Fixture.data(name))
            #expect(image.warnings.isEmpty && !image.isPartial, "\(name): \(image.warnings)")
        }
    }
}

/// The manager and the command with damaged images: warnings are a success (logged, counted,
/// cached as usual); a file cut short fails, or with `.acceptTruncatedImages` is delivered as a
/// partial image that no cache keeps.
@Suite("Lenient decoding in the manager and the command")
struct LenientLoadTests {
    @Test("a JPEG with stray bytes loads, is cached, logged at debug and counted; the URL is never blocked")
    func warningsAreSuccess() async throws {
        try await ManagerHarness.run { harness in
            let junk = try Fixture.data("quirks/jpeg-junk-before-dqt.jpg")
            harness.origin.route("/junk.jpg", .ok([UInt8](junk), contentType: "image/jpeg"))
            let metrics = TestMetrics()
            let logs = EventLog<String>()
            let manager = ImageManager(
                cache: try harness.makeCache(), loader: harness.downloader, coders: harness.coders,
                telemetry: Telemetry(logHandlerFactory: { _ in EventLogHandler(entries: logs) }, metricsFactory: metrics))
            let url = harness.origin.url("/junk.jpg")
            let result = try await manager.image(for: url, options: .waitStoreCache)
            #expect(result.image?.warnings.first?.contains("extraneous bytes") == true && result.image?.isPartial == false)
            try await logs.waitFor("the warning logged at debug") { $0.hasPrefix("debug decoded with warnings") }
            #expect(try metrics.expectCounter("webimage_decode_warnings_total", [("partial", "false")]).totalValue == 1)
            #expect(!manager.failedURLs.contains(url))
            let again = try await manager.image(for: url)
            #expect(again.cacheType == .memory && harness.origin.requestCount("/junk.jpg") == 1)
        }
    }

    @Test("a JPEG cut short fails by default; accepted, it is partial, counted, and never cached")
    func truncatedImages() async throws {
        try await ManagerHarness.run { harness in
            let cut = try Fixture.data("quirks/jpeg-truncated.jpg")
            harness.origin.route("/cut.jpg", .ok([UInt8](cut), contentType: "image/jpeg"))
            let metrics = TestMetrics()
            let manager = ImageManager(
                cache: try harness.makeCache(), loader: harness.downloader, coders: harness.coders,
                telemetry: Telemetry(metricsFactory: metrics))
            let url = harness.origin.url("/cut.jpg")
            await #expect(throws: WebImageError(.decodeFailed)) { try await manager.image(for: url, options: .retryFailed) }
            let partial = try await manager.image(for: url, options: [.acceptTruncatedImages, .retryFailed, .waitStoreCache])
            #expect(partial.image?.isPartial == true && partial.image?.pixelWidth == 40)
            #expect(try metrics.expectCounter("webimage_decode_warnings_total", [("partial", "true")]).totalValue == 1)
            #expect(!manager.failedURLs.contains(url), "a success takes the URL off the failed list")
            let key = CacheKey(manager.cacheKey(for: url))
            #expect(manager.cache.memoryImage(for: key) == nil)
            let onDisk = await manager.cache.query(key, options: [.avoidDecodeImage], cacheType: .disk)
            #expect(!onDisk.isHit, "part of an image is never stored")
            _ = try await manager.image(for: url, options: .acceptTruncatedImages)
            #expect(harness.origin.requestCount("/cut.jpg") == 3, "every load asks the origin again")
        }
    }

    @Test("info shows warnings; convert and fetch refuse a cut file unless --accept-truncated")
    func command() async throws {
        let workspace = try CommandWorkspace()
        let info = try await workspace.run(["info", Fixture.url("quirks/gif-no-trailer.gif").path, "--json"])
        #expect(info.status == 0, "\(info.standardError)")
        #expect((info.json["warnings"] as? [String])?.first?.contains("trailer") == true && info.json["partial"] as? Bool == false)
        let plain = try await workspace.run(["info", Fixture.url("quirks/png-bad-text-crc.png").path])
        #expect(plain.lines.contains { $0.hasPrefix("warning:") && $0.contains("CRC") }, "\(plain.lines)")

        let cut = Fixture.url("quirks/jpeg-truncated.jpg").path
        let refused = try await workspace.run(["convert", cut, workspace.path("cut.png")])
        #expect(refused.status != 0 && refused.standardError.contains("Premature end"), "\(refused.standardError)")
        let converted = try await workspace.run(["convert", cut, workspace.path("cut.png"), "--accept-truncated", "--json"])
        #expect(converted.status == 0 && converted.json["partial"] as? Bool == true, "\(converted.standardError)")
        let written = try CodersManager.shared.decode(try #require(FileManager.default.contents(atPath: workspace.path("cut.png"))))
        #expect(written.pixelWidth == 40 && written.pixelHeight == 32)

        let origin = try await OriginServer.start()
        origin.route("/cut.jpg", .ok([UInt8](try Fixture.data("quirks/jpeg-truncated.jpg")), contentType: "image/jpeg"))
        let url = origin.url("/cut.jpg").absoluteString
        let failed = try await workspace.run(["fetch", url, "--json"])
        let fetched = try await workspace.run(["fetch", url, "--accept-truncated", "-o", workspace.path("fetched.jpg"), "--json"])
        try await origin.shutdown()
        #expect(failed.status == 1)
        #expect(fetched.status == 0 && fetched.jsonLines().first?["partial"] as? Bool == true, "\(fetched.standardError)")
        let saved = try #require(FileManager.default.contents(atPath: workspace.path("fetched.jpg")))
        #expect(saved != (try Fixture.data("quirks/jpeg-truncated.jpg")), "the decoded image is written, not the bytes cut short")
        #expect(try CodersManager.shared.decode(saved).isPartial == false)
    }
}
