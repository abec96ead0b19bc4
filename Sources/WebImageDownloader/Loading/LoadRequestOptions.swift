/// What a caller asks of one load, beyond the URL (SDWebImage's downloader options and the
/// request-affecting context).
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
    public var handleCookies: Bool
    /// Accept TLS certificates that do not verify.
    public var allowInvalidCertificates: Bool
    /// Make the request conditional on the cached copy still being current.
    public var validators: HTTPValidators?
    /// Replaces the downloader's request modifier for this load.
    public var requestModifier: DownloadRequestModifier?
    /// Replaces the downloader's response modifier for this load.
    public var responseModifier: DownloadResponseModifier?
    /// Replaces the downloader's decryptor for this load.
    public var decryptor: DownloadDecryptor?

    /// Creates options; the defaults make a plain, normal-priority request.
    public init(
        priority: Priority = .normal,
        progressive: Bool = false,
        handleCookies: Bool = false,
        allowInvalidCertificates: Bool = false,
        validators: HTTPValidators? = nil,
        requestModifier: DownloadRequestModifier? = nil,
        responseModifier: DownloadResponseModifier? = nil,
        decryptor: DownloadDecryptor? = nil
    ) {
        self.priority = priority
        self.progressive = progressive
        self.handleCookies = handleCookies
        self.allowInvalidCertificates = allowInvalidCertificates
        self.validators = validators
        self.requestModifier = requestModifier
        self.responseModifier = responseModifier
        self.decryptor = decryptor
    }
}
