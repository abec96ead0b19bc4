import AsyncHTTPClient
import Foundation
import NIOCore
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
        var handleCookies: Bool { request.handleCookies }
        var allowInvalidCertificates: Bool { request.allowInvalidCertificates }
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
        /// Where the transfer is in its life, and what comes next.
        var machine = DownloadTransferStateMachine()
        /// The handle of the step running now, for ``cancel()`` to stop.
        var activity = Activity.idle
        var isQueued = true
    }

    /// What a started transfer is doing, for cancelling to stop.
    enum Activity {
        case idle
        /// An asynchronous request modifier is running.
        case preparing(Task<Void, Never>)
        case requesting(HTTPClient.Task<Data>)
        /// Backing off before a retry.
        case waiting(Scheduled<Void>)
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

    /// Moves the state machine on by one event, under the transfer's lock.
    func step(_ event: (inout DownloadTransferStateMachine) -> DownloadTransferStateMachine.Action) -> DownloadTransferStateMachine.Action {
        state.withLock { event(&$0.machine) }
    }

    /// Starts a step with `start` and keeps its handle for ``cancel()``, both under the lock, so
    /// that the step cannot record its own next step before this one is recorded; false, with
    /// nothing started, once the transfer is cancelled (cancelling may have come between the
    /// machine's action and this).
    func record(_ start: () -> Activity) -> Bool {
        state.withLock { state in
            guard !state.machine.isCancelled else { return false }
            state.activity = start()
            return true
        }
    }

    /// Cancels the transfer: a running step is stopped, and its end finishes the transfer as
    /// cancelled; a queued one finishes as cancelled when it would have started.
    func cancel() {
        let activity = state.withLock { state -> Activity? in
            guard case .stopRunningWork = state.machine.cancel() else { return nil }
            return state.activity
        }
        switch activity {
        case .none, .idle?: break
        case .preparing(let task)?: task.cancel()
        case .requesting(let task)?: task.cancel()
        case .waiting(let backoff)?: backoff.cancel()
        }
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
            state.activity = .idle
            return state.subscribers.finish()
        }
        for subscriber in recipients { subscriber.deliver(.finished(result)) }
    }
}
