/// The one error type the library throws and reports.
///
/// Switch over ``code`` to decide what to do; ``underlyingError`` keeps the error that caused it
/// (a transport error, a POSIX error from the file system, a codec's message) for logs.
/// Two errors are equal when their codes are equal, so tests and callers can write
/// `error == WebImageError(.timedOut)` or `error.code == .badStatus(404)`.
public struct WebImageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in a form a caller can switch over.
    public enum Code: Sendable, Hashable {
        /// The URL was nil, empty or not one any loader accepts.
        case invalidURL
        /// The URL is on the failed-URL list and the load did not ask to retry it.
        case blockedURL
        /// The load was cancelled.
        case cancelled
        /// The server answered with a status code the request does not accept.
        case badStatus(Int)
        /// The server answered 304: the caller's copy is still good.
        case notModified
        /// No answer arrived within the timeout.
        case timedOut
        /// The host could not be resolved or connected to.
        case cannotConnect
        /// The connection closed before the whole response arrived.
        case connectionLost
        /// The response was not valid HTTP: a head over the parser's size limit, a malformed
        /// `Content-Length`, or bytes no HTTP parser accepts (URLSession's "bad server response").
        /// Permanent: the same server sends the same bytes again.
        case badServerResponse
        /// TLS failed: the server's certificate did not verify, or the handshake broke down.
        case insecureConnection
        /// Redirects went past the limit, or looped.
        case tooManyRedirects
        /// The body or the image is larger than the configured limit.
        case tooLarge
        /// The bytes are not an image (an HTML error page, for example).
        case notAnImage
        /// The bytes are an image in a format that has no coder here.
        case unsupportedFormat
        /// The image is corrupt or truncated.
        case decodeFailed
        /// The image could not be encoded in the asked format.
        case encodeFailed
        /// A request or response modifier refused the load.
        case rejected
        /// The cache was asked for an entry it does not have, and the load could not go further.
        case cacheMiss
        /// Reading or writing the disk cache failed (read-only directory, full disk, missing file).
        case cacheIO
        /// The transformer returned no image.
        case transformFailed
        /// A transform spec (``TransformSpec``) could not be parsed; the message says where and why.
        case invalidTransformSpec
        /// An argument was not understood (an unknown option name, a malformed size); the message says which.
        case invalidArgument
    }

    /// What went wrong.
    public let code: Code
    /// A human-readable detail, when there is more to say than the code.
    public let message: String?
    /// The error that caused this one, if any.
    public let underlyingError: (any Error & Sendable)?

    /// Creates an error with a code, an optional detail and the error that caused it.
    public init(_ code: Code, _ message: String? = nil, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlyingError = underlying
    }

    /// Whether retrying later could succeed: SDWebImage's rule for keeping a URL off the failed
    /// list (not connected, cancelled, timed out, cannot find or connect to the host, connection
    /// lost), extended with 5xx and 429, which a server sends for passing trouble.
    public var isTransient: Bool {
        switch code {
        case .cancelled, .timedOut, .cannotConnect, .connectionLost:
            return true
        case .badStatus(let status):
            return status == 429 || (500...599).contains(status)
        default:
            return false
        }
    }

    public static func == (lhs: WebImageError, rhs: WebImageError) -> Bool {
        lhs.code == rhs.code
    }

    public var description: String {
        var text = "WebImageError.\(code)"
        if let message { text += ": \(message)" }
        if let underlyingError { text += " (\(underlyingError))" }
        return text
    }
}
