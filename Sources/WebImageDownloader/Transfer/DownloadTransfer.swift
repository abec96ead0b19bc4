import Foundation
import Tracing

/// One network transfer shared by every caller of the same URL and request options.
final class DownloadTransfer: Sendable {
    /// What makes two loads share a transfer.
    struct Key: Hashable {
        let url: URL
        /// The request's own parts; priority and progressiveness belong to the callers (the
        /// transfer takes the highest priority among them), so they are left out.
        let request: LoadRequestOptions

        init(url: URL, options: LoadRequestOptions) {
            self.url = url
            var request = options
            request.priority = .normal
            request.progressive = false
            self.request = request
        }

        var validators: HTTPValidators? { request.validators }
        var handlesCookies: Bool { request.handlesCookies }
        var allowsInvalidCertificates: Bool { request.allowsInvalidCertificates }
        var requestModifier: DownloadRequestModifier? { request.requestModifier }
        var responseModifier: DownloadResponseModifier? { request.responseModifier }
        var decryptor: DownloadDecryptor? { request.decryptor }
        /// Only a plain `GET` without validators continues an interrupted body with `Range`.
        var isResumable: Bool { validators == nil && request.method.uppercased() == "GET" && request.body == nil }
    }

    /// When things happened, for ``DownloadMetrics``.
    struct Timeline {
        let enqueued = ContinuousClock.now
        var started: ContinuousClock.Instant?
        var firstByte: ContinuousClock.Instant?
        var bytes = 0
        var httpVersion: String?
        var attempts = 0

        func metrics(endedAt end: ContinuousClock.Instant) -> DownloadMetrics {
            let start = started ?? end
            return DownloadMetrics(
                queuedTime: start - enqueued, timeToFirstByte: firstByte.map { $0 - start },
                totalTime: end - start, bytes: bytes, httpVersion: httpVersion, attempts: attempts
            )
        }
    }

    typealias Subscriber = Subscribers<TransferEvent, LoadRequestOptions.Priority>.Subscriber

    struct State {
        /// The callers; the highest priority among them is where the transfer waits in the queue.
        var subscribers = Subscribers<TransferEvent, LoadRequestOptions.Priority>()
        /// Where the transfer is in its life.
        var phase = Phase.waiting
        var isQueued = true
    }

    /// Where a transfer is in its life.
    enum Phase {
        /// In the queue for a slot.
        case waiting
        /// Every caller left (or the downloader cancelled everything) while it waited: it never
        /// starts its work.
        case cancelledWhileWaiting
        /// Its attempts (request modifier, requests, redirects, back-offs) run in this task,
        /// which cancelling the transfer cancels.
        case running(Task<Void, Never>)
        /// The callers have their result.
        case finished
    }

    let key: Key
    let options: LoadRequestOptions
    /// Order of arrival, for FIFO and LIFO.
    let sequence: Int
    let state: Locked<State>
    let timeline = Locked(Timeline())
    /// The trace of the caller that started it: its requests' spans are beneath that caller's
    /// span, and the origin is told the trace (`traceparent`). Callers that join later share it.
    let traceContext: ServiceContext?

    init(key: Key, options: LoadRequestOptions, sequence: Int) {
        self.key = key
        self.options = options
        self.sequence = sequence
        state = Locked(State())
        traceContext = options.traceContext ?? ServiceContext.current
    }

    /// Runs the transfer's work in a task of its own, at its callers' highest priority, unless
    /// it was cancelled while it waited: false then, with nothing started, and the caller ends it
    /// as cancelled (which gives its slot back).
    ///
    /// The task is detached: it is the transfer's, shared by every caller, and must not carry the
    /// task-local values (trace, logger metadata) of whichever caller's thread gave it its slot.
    func launch(_ work: @escaping @Sendable () async -> Void) -> Bool {
        state.withLock { state in
            guard case .waiting = state.phase else { return false }
            let priority = (state.subscribers.priority ?? .normal).taskPriority
            state.phase = .running(Task.detached(priority: priority, operation: work))
            return true
        }
    }

    /// Cancels the transfer: a running one's task is cancelled and ends it as cancelled; a
    /// waiting one finishes as cancelled when a slot reaches it.
    func cancel() {
        let running = state.withLock { state -> Task<Void, Never>? in
            switch state.phase {
            case .waiting:
                state.phase = .cancelledWhileWaiting
                return nil
            case .running(let task): return task
            case .cancelledWhileWaiting, .finished: return nil
            }
        }
        running?.cancel()
    }

    /// Sends an event to every caller still subscribed (partial data only to those who asked).
    func broadcast(_ event: LoadEvent) {
        let recipients = state.withLock { state in
            if case .partialData = event { return state.subscribers.recipients(partial: true) }
            return state.subscribers.recipients(partial: false)
        }
        for subscriber in recipients { subscriber.deliver(.update(event)) }
    }

    /// Ends the transfer for every caller, once.
    func finish(_ result: Result<LoadedData, WebImageError>) {
        let recipients = state.withLock { state in
            state.phase = .finished
            return state.subscribers.finish()
        }
        for subscriber in recipients { subscriber.deliver(.finished(result)) }
    }
}
