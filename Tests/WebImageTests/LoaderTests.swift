import Foundation
import Testing
import WebImage
import WebImageTesting
import WebImageTestSupport

@Suite("file: and data: loaders, LoadersManager")
struct LoaderTests {
    @Test("file: URLs load; a missing file and an oversized one are typed errors")
    func fileURLs() async throws {
        let url = Fixture.url("gradient.jpg")
        let loaded = try await FileURLLoader().loadData(url)
        #expect(loaded.data == (try Fixture.data("gradient.jpg")))
        #expect(loaded.contentType == "image/jpeg")
        await #expect(throws: WebImageError(.invalidURL)) {
            try await FileURLLoader().loadData(URL(fileURLWithPath: "/nonexistent/\(UUID()).png"))
        }
        await #expect(throws: WebImageError(.tooLarge)) {
            try await FileURLLoader(maximumSize: 100).loadData(url)
        }
    }

    @Test("data: URLs decode base64 and percent-encoded text")
    func dataURLs() async throws {
        let png = try Fixture.data("gradient-rgba.png")
        let url = try #require(URL(string: "data:image/png;base64," + png.base64EncodedString()))
        let loaded = try await DataURLLoader().loadData(url)
        #expect(loaded.data == png)
        #expect(loaded.contentType == "image/png")
        let text = try await DataURLLoader().loadData(try #require(URL(string: "data:,hello%20world")))
        #expect(text.data == Data("hello world".utf8))
        await #expect(throws: WebImageError(.invalidURL)) {
            try await DataURLLoader().loadData(try #require(URL(string: "data:image/png;base64")))
        }
    }

    @Test("the manager routes each URL to the last-added loader that takes it")
    func routing() async throws {
        struct Claims: ImageLoader {
            func canLoad(_ url: URL) -> Bool { url.isFileURL }
            func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
                async throws(WebImageError) -> LoadedData
            {
                LoadedData(data: Data([42]), url: url)
            }
        }
        let manager = LoadersManager(loaders: [FileURLLoader(), DataURLLoader()])
        #expect(manager.canLoad(Fixture.url("gradient.jpg")))
        #expect(try await manager.loadData(try #require(URL(string: "data:,x"))).data == Data("x".utf8))
        #expect(!manager.canLoad(try #require(URL(string: "gopher://example.com/a.png"))))
        await #expect(throws: WebImageError(.invalidURL)) {
            try await manager.loadData(try #require(URL(string: "gopher://example.com/a.png")))
        }
        manager.add(Claims())
        #expect(try await manager.loadData(Fixture.url("gradient.jpg")).data == Data([42]))
    }

    @Test("a manager's cancelled load cancels the task of the application's loader, which throws cancelled")
    func cancellation() async throws {
        /// Returns only when its task is cancelled, recording the start and the cancellation.
        final class Hanging: ImageLoader {
            let log = EventLog<String>()
            func canLoad(_ url: URL) -> Bool { true }
            func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
                async throws(WebImageError) -> LoadedData
            {
                log.record("started")
                await untilCancelled()
                log.record("cancelled")
                throw WebImageError(.cancelled)
            }
        }
        let loader = Hanging()
        let manager = ImageManager(cache: ImageCache(disk: nil), loader: loader)
        let task = Task { try await manager.image(for: URL(string: "https://example.com/x.png")!) }
        try await loader.log.waitFor { $0 == "started" }
        task.cancel()
        await #expect(throws: (any Error).self) { try await task.value }
        try await loader.log.waitFor { $0 == "cancelled" }
    }
}
