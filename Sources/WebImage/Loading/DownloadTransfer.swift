import Foundation

/// One network transfer shared by every caller of the same URL and request options.
final class DownloadTransfer: Sendable {
    /// What makes two loads share a transfer.
    struct Key: Hashable {
        let url: URL
        let validators: HTTPValidators?
        let handleCookies: Bool
        let allowInvalidCertificates: Bool
        let requestModifier: DownloadRequestModifier?
        let responseModifier: DownloadResponseModifier?
        let decryptor: DownloadDecryptor?

        init(url: URL, options: LoadRequestOptions) {
            self.url = url
            validators = options.validators
            handleCookies = options.handleCookies
            allowInvalidCertificates = options.allowInvalidCertificates
            requestModifier = options.requestModifier
            responseModifier = options.responseModifier
            decryptor = options.decryptor
        }
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

    struct State {
        var subscribers: [Int: @Sendable (LoadEvent) -> Void] = [:]
        var wantsPartialData: Set<Int> = []
        var subscriberPriorities: [Int: LoadRequestOptions.Priority] = [:]
        /// The highest priority among the callers: where the transfer waits in the queue.
        var priority: LoadRequestOptions.Priority
        var task: Task<Void, Never>?
        var isQueued = true
    }

    let key: Key
    let options: LoadRequestOptions
    /// Order of arrival, for FIFO and LIFO.
    let sequence: Int
    let state: Locked<State>
    let timeline = Locked(Timeline())

    init(key: Key, options: LoadRequestOptions, sequence: Int) {
        self.key = key
        self.options = options
        self.sequence = sequence
        state = Locked(State(priority: options.priority))
    }

    /// Sends an event to every caller still subscribed (partial data only to those who asked).
    func broadcast(_ event: LoadEvent) {
        let handlers: [@Sendable (LoadEvent) -> Void] = state.withLock { state in
            if case .partialData = event {
                return state.wantsPartialData.compactMap { state.subscribers[$0] }
            }
            return Array(state.subscribers.values)
        }
        for handler in handlers { handler(event) }
    }

    /// Ends the transfer for every caller, once.
    func finish(_ result: Result<LoadedData, WebImageError>) {
        let handlers = state.withLock { state in
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for handler in handlers { handler(.finished(result)) }
    }
}
