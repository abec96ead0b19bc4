public import Foundation

/// Loads images ahead of need into the cache (SDWebImage's `SDWebImagePrefetcher`), at most
/// ``maxConcurrentPrefetchCount`` at a time across all its batches, with `.lowPriority` by
/// default so that loads a user waits for go first.
public final class ImagePrefetcher: Sendable {
    private struct Settings {
        var maxConcurrentPrefetchCount = 3
        var options: LoadOptions = .lowPriority
        var context = LoadContext()
        var callbackQueue: CallbackQueue = .inline
        var delegate: (any ImagePrefetcherDelegate)?
    }

    private struct Queue {
        var running = 0
        var tokens: [PrefetchToken] = []
    }

    /// A prefetcher over the shared manager.
    public static let shared = ImagePrefetcher()

    /// The manager that loads.
    public let manager: ImageManager
    private let settings = Locked(Settings())
    private let queue = Locked(Queue())

    /// A prefetcher over `manager`.
    public init(manager: ImageManager = .shared) {
        self.manager = manager
    }

    /// At most this many loads at once, across batches. Default 3.
    public var maxConcurrentPrefetchCount: Int {
        get { settings.withLock { $0.maxConcurrentPrefetchCount } }
        set { settings.withLock { $0.maxConcurrentPrefetchCount = max(1, newValue) } }
    }

    /// Options for batches that give none. Default `.lowPriority`.
    public var options: LoadOptions {
        get { settings.withLock { $0.options } }
        set { settings.withLock { $0.options = newValue } }
    }

    /// Context for batches that give none.
    public var context: LoadContext {
        get { settings.withLock { $0.context } }
        set { settings.withLock { $0.context = newValue } }
    }

    /// Where progress, completion and delegate calls run. Default inline.
    public var callbackQueue: CallbackQueue {
        get { settings.withLock { $0.callbackQueue } }
        set { settings.withLock { $0.callbackQueue = newValue } }
    }

    /// Hears every URL and batch.
    public var delegate: (any ImagePrefetcherDelegate)? {
        get { settings.withLock { $0.delegate } }
        set { settings.withLock { $0.delegate = newValue } }
    }

    /// Prefetches `urls`. `progress` hears (finished, total) after each URL; `completed` hears
    /// (finished, skipped) once all are done, skipped counting the ones that failed. An empty
    /// list completes at once with (0, 0).
    @discardableResult
    public func prefetch(
        _ urls: [URL],
        options: LoadOptions? = nil,
        context: LoadContext? = nil,
        progress: (@Sendable (_ finished: Int, _ total: Int) -> Void)? = nil,
        completed: (@Sendable (_ finished: Int, _ skipped: Int) -> Void)? = nil
    ) -> PrefetchToken {
        let defaults = settings.withLock { $0 }
        let token = PrefetchToken(
            urls: urls, options: options ?? defaults.options, context: context ?? defaults.context,
            progress: progress, completed: completed)
        guard !urls.isEmpty else {
            defaults.callbackQueue.run {
                defaults.delegate?.imagePrefetcher(self, didFinishWithTotalCount: 0, skippedCount: 0)
                completed?(0, 0)
            }
            return token
        }
        token.state.withLock { $0.releaseSlots = { [weak self] count in self?.release(count) } }
        queue.withLock { $0.tokens.append(token) }
        startWaitingLoads()
        return token
    }

    /// Cancels every batch.
    public func cancelPrefetching() {
        let tokens = queue.withLock { queue in
            defer { queue.tokens = [] }
            return queue.tokens
        }
        for token in tokens { token.cancel() }
        startWaitingLoads()
    }

    /// Starts loads while there is room, taking batches in the order they came.
    private func startWaitingLoads() {
        let limit = maxConcurrentPrefetchCount
        while let (token, index) = nextLoad(limit: limit) {
            start(token, index: index)
        }
    }

    private func nextLoad(limit: Int) -> (PrefetchToken, Int)? {
        queue.withLock { queue in
            guard queue.running < limit else { return nil }
            while let token = queue.tokens.first {
                let index: Int? = token.state.withLock { state in
                    guard !state.isCancelled, state.next < token.urls.count else { return nil }
                    defer { state.next += 1 }
                    return state.next
                }
                if let index {
                    queue.running += 1
                    return (token, index)
                }
                queue.tokens.removeFirst()
            }
            return nil
        }
    }

    /// Starts one load. Its slot is given back exactly once: by its last callback, or by the
    /// cancellation that stopped it before one came.
    private func start(_ token: PrefetchToken, index: Int) {
        let url = token.urls[index]
        let operation = manager.start(ImageRequest(url: url, options: token.options, context: token.context)) { [self] event in
            guard case .finished(let result) = event else { return }
            finished(token, index: index, url: url, result: result)
        }
        guard let operation else { return }
        let cancelled = token.state.withLock { state in
            guard !state.isCancelled else { return true }
            if !operation.isFinished { state.running[index] = operation }
            return false
        }
        if cancelled, operation.cancelIfRunning() { release() }
    }

    private func finished(_ token: PrefetchToken, index: Int, url: URL, result: Result<ImageResult, WebImageError>?) {
        let (delegate, callbackQueue) = settings.withLock { ($0.delegate, $0.callbackQueue) }
        let total = token.urls.count
        // Loads finish on several threads at once; the count is taken and the report queued in
        // one critical section, so reports leave in the order of their counts.
        let isFirstInLine = token.state.withLock { state -> Bool in
            state.running[index] = nil
            guard !state.isCancelled else { return false }
            state.finished += 1
            if case .failure = result { state.skipped += 1 }
            let (finished, skipped) = (state.finished, state.skipped)
            state.pendingReports.append { [self] in
                delegate?.imagePrefetcher(self, didPrefetch: url, result: result, finishedCount: finished, totalCount: total)
                token.progress?(finished, total)
                guard finished == total else { return }
                delegate?.imagePrefetcher(self, didFinishWithTotalCount: total - skipped, skippedCount: skipped)
                token.completed?(finished, skipped)
            }
            defer { state.isReporting = true }
            return !state.isReporting
        }
        release()
        if isFirstInLine { sendReports(of: token, on: callbackQueue) }
    }

    /// Sends a batch's queued reports one after another until none is left (or the batch is
    /// cancelled); only one caller drains at a time, and no lock is held while a report runs.
    private func sendReports(of token: PrefetchToken, on callbackQueue: CallbackQueue) {
        while let report = token.state.withLock({ state -> (@Sendable () -> Void)? in
            guard !state.isCancelled, !state.pendingReports.isEmpty else {
                state.pendingReports = []
                state.isReporting = false
                return nil
            }
            return state.pendingReports.removeFirst()
        }) {
            callbackQueue.run(report)
        }
    }

    private func release(_ count: Int = 1) {
        queue.withLock { $0.running -= count }
        startWaitingLoads()
    }
}
