import Foundation
import Testing
import WebImageTesting
@testable import WebImageDownloader
import WebImageTestSupport

/// Issue 36, item 6: `username`/`password` were sent, unasked, to every host, plain http included.
/// Now they answer a Basic challenge, from the configured hosts, over HTTPS unless allowed.
@Suite("Downloader credentials")
struct CredentialsTests {
    private let png = [UInt8](try! Fixture.data("gradient-rgba.png"))
    private static let challenge = OriginResponse.status(401, headers: [("WWW-Authenticate", "Basic realm=\"images\"")])

    private func authorizations(_ origin: OriginServer, _ path: String) -> [String?] {
        origin.requests(to: path).map { $0.header("Authorization") }
    }

    @Test("never sent unasked; a challenge is answered once, then the origin gets them at once")
    func answersAChallenge() async throws {
        var configuration = ImageDownloaderConfiguration(username: "user", password: "secret", retryPolicy: .none)
        configuration.sendsCredentialsOverHTTP = true
        try await withDownloader(configuration) { origin, downloader in
            origin.route("/open.png", .ok(png, contentType: "image/png"))
            origin.route("/guarded.png", sequence: [Self.challenge, .ok(png, contentType: "image/png")])
            origin.route("/after.png", .ok(png, contentType: "image/png"))
            _ = try await downloader.loadData(origin.url("/open.png"))
            #expect(authorizations(origin, "/open.png") == [nil], "no challenge, no credentials")
            let loaded = try await downloader.loadData(origin.url("/guarded.png"))
            #expect(loaded.data == Data(png))
            #expect(authorizations(origin, "/guarded.png") == [nil, "Basic dXNlcjpzZWNyZXQ="])
            _ = try await downloader.loadData(origin.url("/after.png"))
            #expect(authorizations(origin, "/after.png") == ["Basic dXNlcjpzZWNyZXQ="], "the challenged origin gets them at once")
        }
    }

    @Test("wrong credentials: the second 401 is the answer, not a loop")
    func rejectedOnce() async throws {
        var configuration = ImageDownloaderConfiguration(username: "user", password: "wrong", retryPolicy: .none)
        configuration.sendsCredentialsOverHTTP = true
        try await withDownloader(configuration) { origin, downloader in
            origin.route("/guarded.png", Self.challenge)
            await #expect(throws: WebImageError(.badStatus(401))) { try await downloader.loadData(origin.url("/guarded.png")) }
            #expect(origin.requestCount("/guarded.png") == 2)
        }
    }

    @Test("over plain http, or from a host outside credentialHosts, a challenge is not answered")
    func scoped() async throws {
        try await withDownloader(ImageDownloaderConfiguration(username: "user", password: "secret", retryPolicy: .none)) {
            origin, downloader in
            origin.route("/guarded.png", Self.challenge)
            await #expect(throws: WebImageError(.badStatus(401))) { try await downloader.loadData(origin.url("/guarded.png")) }
            #expect(authorizations(origin, "/guarded.png") == [nil], "plain http: the password is never sent")
        }
        var onlyOther = ImageDownloaderConfiguration(username: "user", password: "secret", retryPolicy: .none)
        onlyOther.sendsCredentialsOverHTTP = true
        onlyOther.credentialHosts = ["images.example"]
        try await withDownloader(onlyOther) { origin, downloader in
            origin.route("/guarded.png", Self.challenge)
            await #expect(throws: WebImageError(.badStatus(401))) { try await downloader.loadData(origin.url("/guarded.png")) }
            #expect(authorizations(origin, "/guarded.png") == [nil], "127.0.0.1 is not a credential host")
        }
    }
}
