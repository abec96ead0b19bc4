public import Foundation

/// One batch of a prefetcher (SDWebImage's `SDWebImagePrefetchToken`): cancelling it stops
/// that batch alone; its completion is then never called.
public final class PrefetchToken: ImageOperation {
    struct State {
        var next = 0
        var finished = 0
        var skipped = 0
        var running: [Int: LoadOperation] = [:]
        var isCancelled = false
        /// Gives back the prefetcher's slots of loads that cancelling stopped.
        var releaseSlots: (@Sendable (Int) -> Void)?
        /// Progress and completion reports waiting to be sent, in the order of their counts.
        var pendingReports: [@Sendable () -> Void] = []
        /// Whether a thread is sending the pending reports.
        var isReporting = false
    }

    /// The batch's URLs.
    public let urls: [URL]
    let options: LoadOptions
    let context: LoadContext
    let progress: (@Sendable (_ finished: Int, _ total: Int) -> Void)?
    let completed: (@Sendable (_ finished: Int, _ skipped: Int) -> Void)?
    let state = Locked(State())

    init(
        urls: [URL], options: LoadOptions, context: LoadContext,
        progress: (@Sendable (Int, Int) -> Void)?, completed: (@Sendable (Int, Int) -> Void)?
    ) {
        self.urls = urls
        self.options = options
        self.context = context
        self.progress = progress
        self.completed = completed
    }

    /// Stops the batch: its running loads are cancelled and no callback follows.
    public func cancel() {
        let (running, release) = state.withLock { state in
            state.isCancelled = true
            defer { state.running = [:] }
            return (Array(state.running.values), state.releaseSlots)
        }
        // A load that finished meanwhile gave its slot back itself.
        let stopped = running.filter { $0.cancelIfRunning() }.count
        if stopped > 0 { release?(stopped) }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool {
        state.withLock { $0.isCancelled }
    }

    /// URLs finished so far (loaded or failed).
    public var finishedCount: Int {
        state.withLock { $0.finished }
    }

    /// URLs that failed so far.
    public var skippedCount: Int {
        state.withLock { $0.skipped }
    }
}
