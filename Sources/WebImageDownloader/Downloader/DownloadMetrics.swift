/// How one download went: where its time went, what it carried, over which protocol.
public struct DownloadMetrics: Sendable, Equatable {
    /// Time spent waiting in the downloader's queue.
    public var queuedTime: Duration
    /// From the first attempt's start to its response head, when one arrived.
    public var timeToFirstByte: Duration?
    /// From the first attempt's start to the end.
    public var totalTime: Duration
    /// Body bytes received in the last attempt (including resumed bytes kept from before).
    public var bytes: Int
    /// The HTTP version of the last response, such as `HTTP/1.1`.
    public var httpVersion: String?
    /// Attempts made, retries included.
    public var attempts: Int

    /// Creates metrics.
    public init(queuedTime: Duration, timeToFirstByte: Duration?, totalTime: Duration, bytes: Int, httpVersion: String?, attempts: Int) {
        self.queuedTime = queuedTime
        self.timeToFirstByte = timeToFirstByte
        self.totalTime = totalTime
        self.bytes = bytes
        self.httpVersion = httpVersion
        self.attempts = attempts
    }
}
