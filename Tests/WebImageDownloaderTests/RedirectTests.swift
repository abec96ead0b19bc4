import AsyncHTTPClient
import Foundation
import Testing
import WebImageTesting
@testable import WebImageDownloader
import WebImageTestSupport

/// Redirects followed by the downloader itself, hop by hop, and a client handed over by the
/// application.
@Suite("Redirects and clients")
struct RedirectTests {
    let png: [UInt8]

    init() throws {
        png = [UInt8](try Fixture.data("gradient-rgba.png"))
    }

    @Test("the hook sees every hop and can follow, refuse or rewrite it; the final URL is reported")
    func hook() async throws {
        let hops = Locked<[RedirectHop]>([])
        let configuration = ImageDownloaderConfiguration(
            redirectHandler: { hop in
                hops.withLock { $0.append(hop) }
                if hop.to.path == "/forbidden.png" { return .refuse }
                if hop.to.path == "/old.png" { return .rewrite(hop.to.deletingLastPathComponent().appendingPathComponent("new.png")) }
                return .follow
            }, retryPolicy: .none)
        try await withDownloader(configuration) { origin, downloader in
            origin.route("/a", .redirect(to: "/b", status: 301))
            origin.route("/b", .redirect(to: "/end.png", status: 308))
            origin.route("/end.png", .ok(png, contentType: "image/png"))
            origin.route("/to-forbidden", .redirect(to: "/forbidden.png"))
            origin.route("/forbidden.png", .ok(png, contentType: "image/png"))
            origin.route("/to-old", .redirect(to: "/old.png", status: 307))
            origin.route("/new.png", .ok(png, contentType: "image/png"))

            let followed = try await downloader.loadData(origin.url("/a"))
            #expect(followed.url == origin.url("/end.png"))
            #expect(
                hops.withLock { $0 }
                    == [
                        RedirectHop(from: origin.url("/a"), to: origin.url("/b"), statusCode: 301, number: 1),
                        RedirectHop(from: origin.url("/b"), to: origin.url("/end.png"), statusCode: 308, number: 2),
                    ])
            await #expect(throws: WebImageError(.rejected)) { try await downloader.loadData(origin.url("/to-forbidden")) }
            #expect(origin.requestCount("/forbidden.png") == 0)
            let rewritten = try await downloader.loadData(origin.url("/to-old"))
            #expect(rewritten.url == origin.url("/new.png"))
            #expect(origin.requestCount("/old.png") == 0)
        }
    }

    @Test("the limit is configurable and 10 by default; a cycle is an error")
    func limit() async throws {
        #expect(ImageDownloaderConfiguration().maximumRedirects == 10)
        try await withDownloader(ImageDownloaderConfiguration(maximumRedirects: 2, retryPolicy: .none)) { origin, downloader in
            for step in 0..<3 { origin.route("/r\(step)", .redirect(to: "/r\(step + 1)")) }
            origin.route("/r3", .ok(png, contentType: "image/png"))
            origin.route("/r2b", .redirect(to: "/r3"))
            await #expect(throws: WebImageError(.tooManyRedirects)) { try await downloader.loadData(origin.url("/r0")) }
            #expect(origin.requestCount("/r3") == 0)
            let twoHops = try await downloader.loadData(origin.url("/r1"))
            #expect(twoHops.url == origin.url("/r3"), "two hops are within the limit")
            origin.route("/x", .redirect(to: "/y"))
            origin.route("/y", .redirect(to: "/x"))
            await #expect(throws: WebImageError(.tooManyRedirects)) { try await downloader.loadData(origin.url("/x")) }
        }
    }

    @Test("303 turns a POST into a GET without its body; credentials stay with their origin")
    func methodAndCredentials() async throws {
        var configuration = ImageDownloaderConfiguration(username: "user", password: "secret", retryPolicy: .none)
        configuration.sendsCredentialsOverHTTP = true
        try await withDownloader(configuration) { origin, downloader in
            // The origin's challenge is answered, and the origin then gets the credentials at once.
            origin.route(
                "/post",
                sequence: [.status(401, headers: [("WWW-Authenticate", "Basic realm=\"x\"")]), .redirect(to: "/result.png", status: 303)])
            origin.route("/result.png", .ok(png, contentType: "image/png"))
            origin.route("/elsewhere", .redirect(to: "http://localhost:\(origin.port)/result.png"))
            let posted = try await downloader.loadData(
                origin.url("/post"),
                options: LoadRequestOptions(method: "POST", headers: [("Content-Type", "text/plain")], body: Data("hi".utf8)))
            #expect(posted.data == Data(png))
            let result = try #require(origin.requests(to: "/result.png").first)
            #expect(result.method == "GET")
            #expect(result.body.isEmpty)
            #expect(result.headers.contains { $0.name.lowercased() == "authorization" }, "same origin: credentials are sent")

            _ = try await downloader.loadData(origin.url("/elsewhere"))
            let crossed = try #require(origin.requests(to: "/result.png").last)
            #expect(crossed.headers.first { $0.name.lowercased() == "host" }?.value == "localhost:\(origin.port)")
            #expect(!crossed.headers.contains { $0.name.lowercased() == "authorization" }, "another origin never gets the credentials")
        }
    }

    @Test("a hop is judged without a socket: the limit first, then the handler (follow, refuse, rewrite), then the cycle check")
    func judgedHops() throws {
        let a = URL(string: "https://a.example/1")!
        let b = URL(string: "https://b.example/2")!
        let c = URL(string: "https://c.example/3")!
        func judge(to target: URL, redirects: Int = 0, visited: [URL] = [], handler: (@Sendable (RedirectHop) -> RedirectDecision)? = nil)
            -> Result<URL, WebImageError>
        {
            RedirectRule.judge(
                from: a, to: target, status: 302, redirects: redirects, visited: visited, limit: 2, original: a, handler: handler)
        }
        #expect(try judge(to: b).get() == b)
        #expect(judge(to: b, redirects: 2).failure?.code == .tooManyRedirects, "the limit counts the hops already followed")
        let seen = Locked<[RedirectHop]>([])
        _ = judge(to: b, redirects: 1) { hop in
            seen.withLock { $0.append(hop) }
            return .follow
        }
        #expect(seen.withLock { $0 } == [RedirectHop(from: a, to: b, statusCode: 302, number: 2)])
        let refused = judge(to: b) { _ in .refuse }
        #expect(refused.failure?.code == .rejected && refused.failure?.refusal == .redirect(from: a.absoluteString, to: b.absoluteString))
        #expect(try judge(to: b) { _ in .rewrite(c) }.get() == c)
        #expect(judge(to: a).failure?.code == .tooManyRedirects, "back to itself")
        #expect(judge(to: c, visited: [c]).failure?.code == .tooManyRedirects, "to a URL that redirected before")
        #expect(judge(to: c) { _ in .rewrite(a) }.failure?.code == .tooManyRedirects, "a rewrite into a cycle is a cycle too")
    }

    @Test("a downloader on the application's own client uses it and leaves it running")
    func externalClient() async throws {
        let origin = try await OriginServer.start()
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let downloader = ImageDownloader(configuration: ImageDownloaderConfiguration(retryPolicy: .none), httpClient: client)
        #expect(try await downloader.loadData(origin.url("/a.png")).data == Data(png))
        try await downloader.shutdown()
        let afterwards = try await client.get(url: origin.url("/a.png").absoluteString).get()
        #expect(afterwards.status.code == 200, "the client still works after the downloader shut down")
        try await client.shutdown()
        try await origin.shutdown()
    }
}
