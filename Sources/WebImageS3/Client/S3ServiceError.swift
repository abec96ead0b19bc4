import Foundation
import WebImageCore

/// An error S3 answered with: its `<Error>` document, or what the status says when there is
/// none (a HEAD's answers have no body). It rides in `WebImageError.underlyingError`; the
/// `WebImageError`'s code is `badStatus(STATUS)` (`notModified` for a 304), so a missing key is
/// `badStatus(404)` and a `SlowDown` is transient as every 503 is.
public struct S3ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// S3's error code, as AWS documents them.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The code's text (`NoSuchKey`).
        public let rawValue: String

        /// Creates a code.
        public init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        /// The key is not in the bucket.
        public static let noSuchKey = Code("NoSuchKey")
        /// The bucket does not exist.
        public static let noSuchBucket = Code("NoSuchBucket")
        /// The multipart upload does not exist (completed, aborted or expired).
        public static let noSuchUpload = Code("NoSuchUpload")
        /// The credentials may not do this.
        public static let accessDenied = Code("AccessDenied")
        /// The access key id is unknown to the server.
        public static let invalidAccessKeyID = Code("InvalidAccessKeyId")
        /// The signature does not match: a wrong secret, or a clock far off.
        public static let signatureDoesNotMatch = Code("SignatureDoesNotMatch")
        /// The request's time is too far from the server's.
        public static let requestTimeTooSkewed = Code("RequestTimeTooSkewed")
        /// Too many requests: slow down (retried with back-off).
        public static let slowDown = Code("SlowDown")
        /// A HEAD (which has no body) of something that is not there.
        public static let notFound = Code("NotFound")

        public var description: String { rawValue }
    }

    /// The HTTP status.
    public var status: Int
    /// S3's code.
    public var code: Code
    /// S3's message, if it sent one.
    public var message: String?
    /// The request id, for AWS support.
    public var requestID: String?

    public var description: String {
        "S3 \(code) (HTTP \(status))" + (message.map { ": \($0)" } ?? "") + (requestID.map { ", request \($0)" } ?? "")
    }

    /// The error of a response with `status` and `body`: the `<Error>` document's fields, else
    /// a code from the status alone.
    /// The most bytes of an error document read; a longer answer is judged by its status alone.
    static let maximumDocumentBytes = 64 * 1024
    /// The most characters of an error's code, message or request id kept: they are the
    /// endpoint's words, which reach logs and answers.
    static let maximumFieldLength = 256

    static func from(status: Int, body: Data, requestID: String?) -> S3ServiceError {
        if !body.isEmpty, let document = try? S3XMLReader.parse(body), document.name == "Error", let code = document["Code"] {
            return S3ServiceError(
                status: status, code: Code(cleaned(code)), message: document["Message"].map(cleaned),
                requestID: (document["RequestId"] ?? requestID).map(cleaned))
        }
        let code: Code =
            switch status {
            case 404: .notFound
            case 403: .accessDenied
            case 503: .slowDown
            default: Code("HTTP\(status)")
            }
        return S3ServiceError(status: status, code: code, message: nil, requestID: requestID)
    }

    /// `text` cut to ``maximumFieldLength`` characters, control characters (a line break in a log
    /// line, an escape sequence on a terminal) replaced by `?`.
    static func cleaned(_ text: String) -> String {
        let cut = text.unicodeScalars.prefix(maximumFieldLength).map { scalar in
            scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format ? "?" : Character(scalar)
        }
        return String(cut) + (text.unicodeScalars.count > maximumFieldLength ? "…" : "")
    }

    /// This error as the library reports it, naming the object (never the credentials).
    func webImageError(_ location: String) -> WebImageError {
        WebImageError(status == 304 ? .notModified : .badStatus(status), "\(location): \(self)", underlying: self)
    }
}
