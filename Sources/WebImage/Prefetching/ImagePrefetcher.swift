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
        /// Batches and asynchronous runs, served in the order they came.
        var waiting: [Waiting] = []
    }

    private enum Waiting {
        case batch(PrefetchToken)
        case run(PrefetchRun)
    }

    /// What a free slot goes to.
    private enum Start {
        /// A batch's next URL.
        case load(PrefetchToken, index: Int)
        /// A run waiting for a slot: resumed, outside the lock.
        case slot(CheckedContinuation<Bool, Never>)
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
        queue.withLock { $0.waiting.append(.batch(token)) }
        startWaitingLoads()
        return token
    }

    /// Works through `entries` as the sequence yields them, each entry's work in one of the
    /// prefetcher's slots: at most ``maxConcurrentPrefetchCount`` at once, shared with its
    /// batches, the run taking its turn in their line. `work` is asked for each entry's work in
    /// order (nil skips the entry) before the run waits for a slot, so a sequence of any length
    /// (a list read from a file, a database cursor) is read only as fast as it is worked through.
    ///
    /// ```swift
    /// try await prefetcher.prefetch(urls) { url in
    ///     { _ = try await prefetcher.manager.image(for: url, options: .lowPriority) }
    /// }
    /// ```
    ///
    /// The run returns when every entry's work has ended. The first error thrown by the
    /// sequence, by `work` or by an entry's work ends it: what is running is cancelled, no more
    /// is read, and the error is thrown. Cancelling the calling task, or
    /// ``cancelPrefetching()``, ends it the same way with `CancellationError`. The delegate and
    /// the batches' reports do not hear a run: its work reports what it does.
    public func prefetch<Entries: AsyncSequence>(
        _ entries: Entries, making work: (Entries.Element) throws -> (@Sendable () async throws -> Void)?
    ) async throws {
        let run = PrefetchRun()
        queue.withLock { $0.waiting.append(.run(run)) }
        defer {
            run.end()
            queue.withLock { $0.waiting.removeAll { if case .run(let other) = $0 { other === run } else { false } } }
        }
        try await withThrowingDiscardingTaskGroup { group in
            for try await entry in entries {
                guard let piece = try work(entry) else { continue }
                guard await run.waitForSlot(look: startWaitingLoads) else {
                    // An entry's work threw: the group throws that error once the rest has stopped.
                    if run.hasFailed { break }
                    throw CancellationError()
                }
                group.addTask { [self] in
                    // The run ends before the slot is given back, so that no entry is read after a failure.
                    defer { release() }
                    do {
                        try await piece()
                    } catch {
                        run.end(failed: true)
                        throw error
                    }
                }
            }
        }
    }

    /// Cancels every batch, and ends every run with `CancellationError`.
    public func cancelPrefetching() {
        let waiting = queue.withLock { queue in
            defer { queue.waiting = [] }
            return queue.waiting
        }
        for entry in waiting {
            switch entry {
            case .batch(let token): token.cancel()
            case .run(let run): run.end()
            }
        }
        startWaitingLoads()
    }

    /// Starts loads while there is room, taking batches and runs in the order they came.
    private func startWaitingLoads() {
        let limit = maxConcurrentPrefetchCount
        while let start = nextStart(limit: limit) {
            switch start {
            case .load(let token, let index): self.start(token, index: index)
            case .slot(let waiter): waiter.resume(returning: true)
            }
        }
    }

    /// What the next free slot goes to, counted as taken: the first batch with a URL left, or
    /// the first run waiting for one, whichever comes first in line (a run reading its next
    /// entry keeps its place); nil when no slot is free or nothing waits.
    private func nextStart(limit: Int) -> Start? {
        queue.withLock { queue in
            guard queue.running < limit else { return nil }
            var position = 0
            while position < queue.waiting.count {
                switch queue.waiting[position] {
                case .batch(let token):
                    let index: Int? = token.state.withLock { state in
                        guard !state.isCancelled, state.next < token.urls.count else { return nil }
                        defer { state.next += 1 }
                        return state.next
                    }
                    guard let index else {
                        queue.waiting.remove(at: position)
                        continue
                    }
                    queue.running += 1
                    return .load(token, index: index)
                case .run(let run):
                    if let waiter = run.takeWaiter() {
                        queue.running += 1
                        return .slot(waiter)
                    }
                    if run.isEnded { queue.waiting.remove(at: position) } else { position += 1 }
                }
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
