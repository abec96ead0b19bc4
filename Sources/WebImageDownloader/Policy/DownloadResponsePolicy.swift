import AsyncHTTPClient
package import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

#if canImport(Glibc)
import Glibc
#endif

/// The downloader's rules for a response, as pure functions of the head, the body and the
/// configuration: which heads carry a usable image, what a range continues, whether a body is
/// an image, how a transport error maps to a code, and whether a failure is tried again after
/// what delay. No socket and no clock: the tests drive it with values.
package struct DownloadResponsePolicy: Sendable {
    /// What a head's judgement lets through: the head (after the response modifier), the bytes
    /// a range continues, and the full length expected.
    struct Accepted: Sendable {
        let head: DownloadResponseHead
        let prefix: Data
        let expected: Int64?
    }

    /// A refusal, with the server's `Retry-After` when it sent one.
    struct Refused: Error {
        let error: WebImageError
        let retryAfter: Duration?
    }

    let acceptableStatusCodes: Range<Int>
    let acceptableContentTypes: Set<String>?
    let maximumBodySize: Int
    let retryPolicy: RetryPolicy

    init(_ configuration: ImageDownloaderConfiguration) {
        acceptableStatusCodes = configuration.acceptableStatusCodes
        acceptableContentTypes = configuration.acceptableContentTypes
        maximumBodySize = configuration.maximumBodySize
        retryPolicy = configuration.retryPolicy
    }

    /// The wait before trying a failed attempt (number `attempt`, from 0) again, or nil to give
    /// up: when the retries are spent, the request is not idempotent, or the failure is not
    /// one a retry can fix; by the request's own `policy` when it has one, else the downloader's.
    func retryDelay(
        after error: WebImageError, attempt: Int, idempotent: Bool, retryAfter: Duration?, policy: RetryPolicy? = nil
    ) -> Duration? {
        let policy = policy ?? retryPolicy
        guard attempt < policy.maximumRetries, idempotent, policy.shouldRetry(error, attempt: attempt) else { return nil }
        return policy.delay(beforeRetry: attempt, retryAfter: retryAfter)
    }

    /// Whether a response head carries an image this download can use.
    func judge(_ head: DownloadResponseHead, url: URL, conditional: Bool, resumable: PartialDownloads.Partial?) -> Result<
        Accepted, Refused
    > {
        let status = head.statusCode
        if status == 304, conditional {
            let error = WebImageError(.notModified, "\(url.absoluteString) has not changed", underlying: NotModifiedResponse(head: head))
            return .failure(.init(error: error, retryAfter: nil))
        }
        guard acceptableStatusCodes.contains(status) else {
            let error = WebImageError(.badStatus(status), "\(status) from \(url.absoluteString)")
            return .failure(.init(error: error, retryAfter: RetryPolicy.retryAfter(head.header("Retry-After"))))
        }
        let prefix: Data
        do throws(WebImageError) {
            prefix = try Self.resumedPrefix(resumable, head: head, url: url)
        } catch {
            return .failure(.init(error: error, retryAfter: nil))
        }
        let expected = head.header("Content-Length").flatMap { Int64($0) }.map { $0 + Int64(prefix.count) }
        if let expected, expected > maximumBodySize {
            let error = WebImageError(.tooLarge, "\(url.absoluteString) declares \(expected) bytes, over \(maximumBodySize)")
            return .failure(.init(error: error, retryAfter: nil))
        }
        return .success(.init(head: head, prefix: prefix, expected: expected))
    }

    /// The bytes a 206 continues from: the kept prefix, when the server's `Content-Range` starts
    /// right after it; nothing for a 200, which sends the whole image again.
    static func resumedPrefix(_ resumable: PartialDownloads.Partial?, head: DownloadResponseHead, url: URL) throws(WebImageError)
        -> Data
    {
        guard head.statusCode == 206 else { return Data() }
        guard let resumable, let range = head.header("Content-Range"), range.hasPrefix("bytes \(resumable.data.count)-") else {
            throw WebImageError(.connectionLost, "\(url.absoluteString) sent a range that does not continue the kept bytes")
        }
        return resumable.data
    }

    /// The full length a 206's `Content-Range` names (`bytes a-b/total`).
    static func completeLength(_ head: DownloadResponseHead) -> Int? {
        guard head.statusCode == 206, let range = head.header("Content-Range"), let slash = range.lastIndex(of: "/") else { return nil }
        return Int(range[range.index(after: slash)...])
    }

    /// Whether a complete body is an image by its declared media type, or by its first bytes
    /// when the type says nothing (absent, or `application/octet-stream`) or is a video's (an
    /// MP4, QuickTime or WebM, whose frames the video coder takes).
    func checkIsImage(_ body: Data, contentType: String?, url: URL) throws(WebImageError) {
        let mediaType = contentType?.split(separator: ";").first.map { $0.trimmingASCIIWhitespace().lowercased() }
        if let acceptable = acceptableContentTypes {
            guard let mediaType, acceptable.contains(mediaType) else {
                throw WebImageError(.notAnImage, "\(url.absoluteString) is \(mediaType ?? "untyped")")
            }
            return
        }
        switch mediaType {
        case let type? where type.hasPrefix("image/"):
            return
        case let type? where type.hasPrefix("video/"):
            // A video the coders can take frames of (MP4, QuickTime, WebM), by its first bytes;
            // whether this build decodes it is the decoder's to say.
            guard ImageFormat(sniffing: body)?.isVideo == true else {
                throw WebImageError(.notAnImage, "\(url.absoluteString) is \(type), not an image or a video read here")
            }
        case nil, "application/octet-stream"?, "binary/octet-stream"?:
            guard ImageFormat(sniffing: body) != nil else {
                throw WebImageError(.notAnImage, "\(url.absoluteString) does not look like an image")
            }
        case let type?:
            throw WebImageError(.notAnImage, "\(url.absoluteString) is \(type), not an image")
        }
    }

    /// Whether a TLS failure is the server's certificate failing to verify (BoringSSL names no
    /// more detail than that).
    static func isCertificateVerificationFailure(_ error: WebImageError) -> Bool {
        guard error.code == .insecureConnection, let underlying = error.underlyingError else { return false }
        return String(describing: underlying).contains("CERTIFICATE_VERIFY_FAILED")
    }

    /// Maps a transport error to the library's codes.
    package static func classify(_ error: any Error, url: URL) -> WebImageError {
        if let error = error as? WebImageError { return error }
        if error is CancellationError { return WebImageError(.cancelled, underlying: error) }
        let detail = "\(url.absoluteString): \(error)"
        if let client = error as? HTTPClientError {
            switch client {
            case .cancelled:
                return WebImageError(.cancelled, underlying: client)
            case .deadlineExceeded, .readTimeout, .writeTimeout:
                return WebImageError(.timedOut, detail, underlying: client)
            case .connectTimeout:
                return WebImageError(.cannotConnect, detail, underlying: client)
            case .redirectLimitReached, .redirectCycleDetected:
                return WebImageError(.tooManyRedirects, detail, underlying: client)
            case .invalidURL, .emptyHost, .emptyScheme:
                return WebImageError(.invalidURL, detail, underlying: client)
            default:
                return WebImageError(.connectionLost, detail, underlying: client)
            }
        }
        if let parser = error as? HTTPParserError {
            // The parser also reports a connection that closed mid-response.
            let lost = parser == .invalidEOFState || parser == .closedConnection
            return WebImageError(lost ? .connectionLost : .badServerResponse, detail, underlying: parser)
        }
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return WebImageError(.insecureConnection, CertificateDiagnosis.nameMismatch(host: url.host ?? "?"), underlying: extra)
        }
        if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError {
            return WebImageError(.insecureConnection, detail, underlying: error)
        }
        if let io = error as? IOError {
            switch io.errnoCode {
            case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL:
                return WebImageError(.cannotConnect, detail, underlying: error)
            case ETIMEDOUT:
                return WebImageError(.timedOut, detail, underlying: error)
            default:
                return WebImageError(.connectionLost, detail, underlying: error)
            }
        }
        // Connection attempts that all failed arrive wrapped; their text still names the cause.
        if String(describing: error).contains("Connection refused") {
            return WebImageError(.cannotConnect, detail, underlying: error)
        }
        return WebImageError(.connectionLost, detail, underlying: error)
    }
}
