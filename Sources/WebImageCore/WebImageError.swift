/// The one error type the library throws and reports.
///
/// Switch over ``code`` to decide what to do; ``underlyingError`` keeps the error that caused it
/// (a transport error, a POSIX error from the file system, a codec's message) for logs.
/// Two errors are equal when their codes are equal, so tests and callers can write
/// `error == WebImageError(.timedOut)` or `error.code == .badStatus(404)`.
public struct WebImageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in a form a caller can compare and switch over.
    ///
    /// A struct with static members rather than an enum (AsyncHTTPClient's `HTTPClientError`
    /// pattern), so that adding a code in a minor release breaks no caller's exhaustive
    /// `switch`: a `switch` over codes always has a `default`. `case .badStatus(404)` and
    /// `case .notAnImage` still match, since codes are `Equatable`; the HTTP status of a
    /// `badStatus` code is ``httpStatus``.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidURL
            case blockedURL
            case cancelled
            case badStatus
            case notModified
            case timedOut
            case cannotConnect
            case connectionLost
            case badServerResponse
            case insecureConnection
            case refusedAddress
            case tooManyRedirects
            case tooLarge
            case notAnImage
            case unsupportedFormat
            case decodeFailed
            case encodeFailed
            case rejected
            case cacheMiss
            case cacheIO
            case transformFailed
            case invalidTransformSpec
            case invalidArgument
        }

        private let base: Base
        /// The HTTP status of a ``badStatus(_:)`` code; nil for every other code.
        public let httpStatus: Int?

        private init(_ base: Base, httpStatus: Int? = nil) {
            self.base = base
            self.httpStatus = httpStatus
        }

        /// The URL was nil, empty or not one any loader accepts.
        public static let invalidURL = Code(.invalidURL)
        /// The URL is on the failed-URL list and the load did not ask to retry it.
        public static let blockedURL = Code(.blockedURL)
        /// The load was cancelled.
        public static let cancelled = Code(.cancelled)
        /// The server answered with a status code the request does not accept.
        public static func badStatus(_ status: Int) -> Code { Code(.badStatus, httpStatus: status) }
        /// The server answered 304: the caller's copy is still good.
        public static let notModified = Code(.notModified)
        /// No answer arrived within the timeout.
        public static let timedOut = Code(.timedOut)
        /// The host could not be resolved or connected to.
        public static let cannotConnect = Code(.cannotConnect)
        /// The connection closed before the whole response arrived.
        public static let connectionLost = Code(.connectionLost)
        /// The response was not valid HTTP: a head over the parser's size limit, a malformed
        /// `Content-Length`, or bytes no HTTP parser accepts (URLSession's "bad server response").
        /// Permanent: the same server sends the same bytes again.
        public static let badServerResponse = Code(.badServerResponse)
        /// TLS failed: the server's certificate did not verify, or the handshake broke down.
        public static let insecureConnection = Code(.insecureConnection)
        /// The address policy refused the address a URL (or a redirect) leads to: loopback, a
        /// private network, a denied host... The message names the address and the rule.
        /// Permanent: the same name leads to the same refusal.
        public static let refusedAddress = Code(.refusedAddress)
        /// Redirects went past the limit, or looped, or the redirect hook refused one.
        public static let tooManyRedirects = Code(.tooManyRedirects)
        /// The body or the image is larger than the configured limit.
        public static let tooLarge = Code(.tooLarge)
        /// The bytes are not an image (an HTML error page, for example).
        public static let notAnImage = Code(.notAnImage)
        /// The bytes are an image in a format that has no coder here.
        public static let unsupportedFormat = Code(.unsupportedFormat)
        /// The image is corrupt or truncated.
        public static let decodeFailed = Code(.decodeFailed)
        /// The image could not be encoded in the asked format.
        public static let encodeFailed = Code(.encodeFailed)
        /// A rule of the application refused the load: the request or response modifier, the
        /// decryptor, the redirect handler, the manager's delegate. ``WebImageError/refusal``
        /// says which.
        public static let rejected = Code(.rejected)
        /// The cache was asked for an entry it does not have, and the load could not go further.
        public static let cacheMiss = Code(.cacheMiss)
        /// Reading or writing the disk cache failed (read-only directory, full disk, missing file).
        public static let cacheIO = Code(.cacheIO)
        /// The transformer returned no image.
        public static let transformFailed = Code(.transformFailed)
        /// A transform spec (WebImageCodecs' `TransformSpec`) could not be parsed; the message says where and why.
        public static let invalidTransformSpec = Code(.invalidTransformSpec)
        /// An argument was not understood (an unknown option name, a malformed size); the message says which.
        public static let invalidArgument = Code(.invalidArgument)

        /// The code's name, with the status for `badStatus`: `timedOut`, `badStatus(404)`.
        public var description: String {
            httpStatus.map { "\(base.rawValue)(\($0))" } ?? base.rawValue
        }
    }

    /// The rule that refused a load, for ``Code/refusedAddress`` and ``Code/rejected`` errors: a
    /// value to switch over, where ``message`` is for people (code that needs the rule reads it
    /// here, never out of the message).
    public enum Refusal: Sendable, Hashable {
        /// The address policy, by the rule that matched: `loopback`, `private network`,
        /// `denied host a.example`, `denied network 203.0.113.0/24`.
        case addressPolicy(rule: String)
        /// The redirect handler refused the hop between these two URLs.
        case redirect(from: String, to: String)
        /// The request modifier returned nil.
        case requestModifier
        /// The response modifier returned nil.
        case responseModifier
        /// The decryptor returned nil.
        case decryptor
        /// The manager's delegate declined to download the URL.
        case delegate
    }

    /// What went wrong.
    public let code: Code
    /// A human-readable detail, when there is more to say than the code.
    public let message: String?
    /// The error that caused this one, if any.
    public let underlyingError: (any Error & Sendable)?
    /// Which rule refused the load, for a refusal; nil otherwise.
    public let refusal: Refusal?

    /// Creates an error with a code, an optional detail, the error that caused it and, for a
    /// refusal, the rule that refused.
    public init(_ code: Code, _ message: String? = nil, underlying: (any Error & Sendable)? = nil, refusal: Refusal? = nil) {
        self.code = code
        self.message = message
        self.underlyingError = underlying
        self.refusal = refusal
    }

    /// Whether retrying later could succeed: SDWebImage's rule for keeping a URL off the failed
    /// list (not connected, cancelled, timed out, cannot find or connect to the host, connection
    /// lost), extended with 5xx and 429, which a server sends for passing trouble.
    public var isTransient: Bool {
        if let status = code.httpStatus { return status == 429 || (500...599).contains(status) }
        return [.cancelled, .timedOut, .cannotConnect, .connectionLost].contains(code)
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

extension Task where Success == Never, Failure == Never {
    /// Throws `WebImageError.Code.cancelled` when the current task is cancelled.
    package static func checkCancellation(as: WebImageError.Type) throws(WebImageError) {
        if Task.isCancelled { throw WebImageError(.cancelled) }
    }
}
