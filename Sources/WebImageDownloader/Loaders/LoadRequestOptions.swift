public import Foundation
public import Tracing

/// What a caller asks of one load, beyond the URL (SDWebImage's downloader options and the
/// request-affecting context), and the parts of the HTTP request itself: method, extra headers,
/// body and timeout. Two loads share a transfer only when all of these are equal (priority and
/// progressiveness aside, which a shared transfer takes from its callers).
public struct LoadRequestOptions: Sendable, Hashable {
    /// Where the load waits in the queue.
    public enum Priority: Int, Sendable, Hashable, Comparable {
        case low = 0
        case normal = 1
        case high = 2

        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Queue priority. Default ``Priority/normal``.
    public var priority: Priority
    /// Deliver the data received so far as it arrives, for progressive decoding.
    public var progressive: Bool
    /// Send and store cookies.
    public var handlesCookies: Bool
    /// Accept TLS certificates that do not verify.
    public var allowsInvalidCertificates: Bool
    /// Make the request conditional on the cached copy still being current.
    public var validators: HTTPValidators?
    /// Replaces the downloader's request modifier for this load.
    public var requestModifier: DownloadRequestModifier?
    /// Replaces the downloader's response modifier for this load.
    public var responseModifier: DownloadResponseModifier?
    /// Replaces the downloader's decryptor for this load.
    public var decryptor: DownloadDecryptor?
    /// The HTTP method. Default `GET`. Only `GET` downloads are resumed with `Range`, and
    /// only idempotent methods (RFC 9110: not `POST` or `PATCH`) are retried.
    public var method: String
    /// Headers for this request: each replaces the downloader's header of the same name
    /// (``ImageDownloaderConfiguration/headers``), the others are added.
    public var headers: [(name: String, value: String)]
    /// The request body, if any.
    public var body: Data?
    /// The most one attempt may take, from sending the request to the body's last byte; nil
    /// leaves it to the downloader's timeouts (connect, and between two pieces of the response).
    public var timeout: Duration?
    /// When this load's failed attempts are retried, instead of the downloader's
    /// ``ImageDownloaderConfiguration/retryPolicy``; nil uses the downloader's.
    public var retryPolicy: RetryPolicy?
    /// The application's own values for this load (the manager passes its context's), for a
    /// loader that needs them; a downloader's transfer is shared only by loads with equal values.
    public var values: CustomValues
    /// The trace the load belongs to: the download's spans go beneath it and the origin is told
    /// it (`traceparent`) when a tracer is set. Nil takes the trace current where the downloader
    /// is called. Not part of what makes two loads share a transfer: the first one's is used.
    public var traceContext: ServiceContext?

    /// Creates options; the defaults make a plain, normal-priority request.
    public init(
        priority: Priority = .normal,
        progressive: Bool = false,
        handlesCookies: Bool = false,
        allowsInvalidCertificates: Bool = false,
        validators: HTTPValidators? = nil,
        requestModifier: DownloadRequestModifier? = nil,
        responseModifier: DownloadResponseModifier? = nil,
        decryptor: DownloadDecryptor? = nil,
        method: String = "GET",
        headers: [(name: String, value: String)] = [],
        body: Data? = nil,
        timeout: Duration? = nil,
        retryPolicy: RetryPolicy? = nil,
        values: CustomValues = CustomValues(),
        traceContext: ServiceContext? = nil
    ) {
        self.values = values
        self.traceContext = traceContext
        self.retryPolicy = retryPolicy
        self.priority = priority
        self.progressive = progressive
        self.handlesCookies = handlesCookies
        self.allowsInvalidCertificates = allowsInvalidCertificates
        self.validators = validators
        self.requestModifier = requestModifier
        self.responseModifier = responseModifier
        self.decryptor = decryptor
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    public static func == (lhs: LoadRequestOptions, rhs: LoadRequestOptions) -> Bool {
        lhs.priority == rhs.priority && lhs.progressive == rhs.progressive && lhs.handlesCookies == rhs.handlesCookies
            && lhs.allowsInvalidCertificates == rhs.allowsInvalidCertificates && lhs.validators == rhs.validators
            && lhs.requestModifier == rhs.requestModifier && lhs.responseModifier == rhs.responseModifier
            && lhs.decryptor == rhs.decryptor && lhs.method == rhs.method && lhs.body == rhs.body && lhs.timeout == rhs.timeout
            && lhs.retryPolicy == rhs.retryPolicy && lhs.values == rhs.values
            && lhs.headers.elementsEqual(rhs.headers) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(priority)
        hasher.combine(progressive)
        hasher.combine(handlesCookies)
        hasher.combine(allowsInvalidCertificates)
        hasher.combine(validators)
        hasher.combine(requestModifier)
        hasher.combine(responseModifier)
        hasher.combine(decryptor)
        hasher.combine(method)
        hasher.combine(body)
        hasher.combine(timeout)
        hasher.combine(retryPolicy)
        hasher.combine(values)
        for header in headers {
            hasher.combine(header.name)
            hasher.combine(header.value)
        }
    }

    /// Whether sending the request twice has the effect of sending it once (RFC 9110 9.2.2), so
    /// that a failed attempt may be retried.
    var isIdempotent: Bool {
        !["POST", "PATCH", "CONNECT"].contains(method.uppercased())
    }
}
