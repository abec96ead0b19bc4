public import Foundation

/// What an ``ImageDownloader`` announces about each transfer (SDWebImage's download
/// notifications), in order: started, response received, then finished or stopped.
public enum DownloadEvent: Sendable {
    /// A transfer left the queue and its first attempt began.
    case started(URL)
    /// A response head arrived.
    case receivedResponse(URL, statusCode: Int)
    /// Every caller cancelled; the transfer stopped.
    case stopped(URL)
    /// The transfer ended, with its metrics and its error if it failed.
    case finished(URL, DownloadMetrics, error: WebImageError?)
}
