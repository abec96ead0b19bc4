import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import WebImageDownloader
import WebImageTestSupport

/// The downloader's response rules, driven with values: no socket, no clock.
@Suite("DownloadResponsePolicy")
struct DownloadResponsePolicyTests {
    let url = URL(string: "https://images.example/a.png")!
    let policy = DownloadResponsePolicy(
        ImageDownloaderConfiguration(
            maximumBodySize: 1000,
            retryPolicy: RetryPolicy(
                maximumRetries: 2, baseDelay: .milliseconds(100), maximumDelay: .seconds(1), maximumRetryAfter: .seconds(5))
        ))

    private func head(_ status: Int, _ headers: [(String, String)] = []) -> DownloadResponseHead {
        DownloadResponseHead(statusCode: status, headers: headers.map { (name: $0.0, value: $0.1) })
    }

    private func refusal(_ verdict: Result<DownloadResponsePolicy.Accepted, DownloadResponsePolicy.Refused>) -> (
        WebImageError.Code, Duration?
    )? {
        guard case .failure(let refused) = verdict else { return nil }
        return (refused.error.code, refused.retryAfter)
    }

    @Test("heads: 200 goes on; 304 is not-modified only when asked; other statuses refuse with their Retry-After")
    func statuses() throws {
        let ok = try policy.judge(head(200, [("Content-Length", "500")]), url: url, conditional: false, resumable: nil).get()
        #expect(ok.expected == 500 && ok.prefix.isEmpty)
        #expect(refusal(policy.judge(head(304), url: url, conditional: true, resumable: nil))?.0 == .notModified)
        #expect(refusal(policy.judge(head(304), url: url, conditional: false, resumable: nil))?.0 == .badStatus(304))
        let busy = refusal(policy.judge(head(503, [("Retry-After", "7")]), url: url, conditional: false, resumable: nil))
        #expect(busy?.0 == .badStatus(503) && busy?.1 == .seconds(7))
        #expect(refusal(policy.judge(head(404), url: url, conditional: false, resumable: nil))?.1 == nil)
    }

    @Test("a declared length over the cap is refused before the body; a 206 must continue the kept bytes")
    func lengthsAndRanges() throws {
        #expect(
            refusal(policy.judge(head(200, [("Content-Length", "1001")]), url: url, conditional: false, resumable: nil))?.0 == .tooLarge)
        let kept = PartialDownloads.Partial(data: Data(repeating: 1, count: 300), validator: "\"v1\"", sequence: 1)
        let continued = try policy.judge(
            head(206, [("Content-Range", "bytes 300-499/500"), ("Content-Length", "200")]), url: url, conditional: false, resumable: kept
        ).get()
        #expect(continued.prefix == kept.data && continued.expected == 500)
        #expect(DownloadResponsePolicy.completeLength(head(206, [("Content-Range", "bytes 300-499/500")])) == 500)
        let elsewhere = head(206, [("Content-Range", "bytes 100-499/500")])
        #expect(refusal(policy.judge(elsewhere, url: url, conditional: false, resumable: kept))?.0 == .connectionLost)
        #expect(refusal(policy.judge(elsewhere, url: url, conditional: false, resumable: nil))?.0 == .connectionLost)
    }

    @Test("bodies: an image/* type passes; an untyped or octet-stream body must sniff as an image; HTML never passes")
    func bodies() throws {
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 24))
        let html = Data("<html>".utf8)
        try policy.checkIsImage(html, contentType: "image/png; charset=x", url: url)
        try policy.checkIsImage(png, contentType: nil, url: url)
        try policy.checkIsImage(png, contentType: "application/octet-stream", url: url)
        #expect(throws: WebImageError(.notAnImage)) { try policy.checkIsImage(html, contentType: nil, url: url) }
        #expect(throws: WebImageError(.notAnImage)) { try policy.checkIsImage(png, contentType: "text/html", url: url) }
        let strict = DownloadResponsePolicy(ImageDownloaderConfiguration(acceptableContentTypes: ["image/webp"]))
        #expect(throws: WebImageError(.notAnImage)) { try strict.checkIsImage(png, contentType: "image/png", url: url) }
        try strict.checkIsImage(png, contentType: "Image/WebP", url: url)
    }

    @Test("retries: transient failures of idempotent requests, within the count, after Retry-After or a capped backoff")
    func retries() {
        let unavailable = WebImageError(.badStatus(503))
        #expect(policy.retryDelay(after: unavailable, attempt: 0, idempotent: true, retryAfter: .seconds(3)) == .seconds(3))
        #expect(policy.retryDelay(after: unavailable, attempt: 0, idempotent: true, retryAfter: .seconds(60)) == .seconds(5))
        let backoff = policy.retryDelay(after: WebImageError(.timedOut), attempt: 1, idempotent: true, retryAfter: nil)
        #expect(backoff.map { $0 >= .zero && $0 <= .milliseconds(200) } == true)
        #expect(policy.retryDelay(after: unavailable, attempt: 2, idempotent: true, retryAfter: nil) == nil, "retries spent")
        #expect(policy.retryDelay(after: unavailable, attempt: 0, idempotent: false, retryAfter: nil) == nil, "a POST")
        #expect(policy.retryDelay(after: WebImageError(.badStatus(404)), attempt: 0, idempotent: true, retryAfter: nil) == nil)
        #expect(policy.retryDelay(after: WebImageError(.notAnImage), attempt: 0, idempotent: true, retryAfter: nil) == nil)
    }

    @Test("transport errors map to codes")
    func classification() {
        let cases: [(any Error, WebImageError.Code)] = [
            (HTTPClientError.readTimeout, .timedOut), (HTTPClientError.deadlineExceeded, .timedOut),
            (HTTPClientError.connectTimeout, .cannotConnect), (HTTPClientError.redirectCycleDetected, .tooManyRedirects),
            (HTTPClientError.emptyHost, .invalidURL), (HTTPClientError.cancelled, .cancelled), (CancellationError(), .cancelled),
            (HTTPParserError.invalidEOFState, .connectionLost), (HTTPParserError.headerOverflow, .badServerResponse),
            (IOError(errnoCode: ECONNREFUSED, reason: "connect"), .cannotConnect),
            (IOError(errnoCode: ECONNRESET, reason: "read"), .connectionLost),
            (WebImageError(.rejected), .rejected),
        ]
        for (error, code) in cases {
            #expect(DownloadResponsePolicy.classify(error, url: url).code == code, "\(error)")
        }
    }
}
