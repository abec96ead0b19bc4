import Foundation
import Testing
import WebImage

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
            func load(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void) -> LoadToken {
                events(.finished(.success(LoadedData(data: Data([42]), url: url))))
                return .finished()
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

    @Test("cancelling the task cancels the load's token and throws cancelled")
    func cancellation() async throws {
        final class Hanging: ImageLoader {
            let tokens = Locked<[LoadToken]>([])
            func canLoad(_ url: URL) -> Bool { true }
            func load(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void) -> LoadToken {
                let token = LoadToken {}
                tokens.withLock { $0.append(token) }
                return token
            }
        }
        let loader = Hanging()
        let task = Task { try await loader.loadData(URL(string: "https://example.com/x.png")!) }
        while loader.tokens.withLock({ $0.isEmpty }) { await Task.yield() }
        task.cancel()
        await #expect(throws: WebImageError(.cancelled)) { try await task.value }
        #expect(loader.tokens.withLock { $0.allSatisfy(\.isCancelled) })
    }
}
