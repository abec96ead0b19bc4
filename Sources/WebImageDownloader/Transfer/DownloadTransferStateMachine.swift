/// The life of one transfer: each event the downloader sees (started, request prepared, attempt
/// ended, retry due, cancelled) moves it on and returns what to do next. It holds no socket,
/// clock, task or handle, so every path, retries and cancellation at each step included, is
/// tested alone (`DownloadTransferStateMachineTests`), as AsyncHTTPClient tests its request
/// state machine. The downloader keeps the handles of what it started and does the actions.
struct DownloadTransferStateMachine: Sendable {
    enum State: Equatable, Sendable {
        /// Waiting for a slot.
        case queued
        /// Making an attempt's request (the request modifier may run).
        case preparing(attempt: Int)
        /// An attempt's request is out; its response is awaited.
        case sending(attempt: Int)
        /// Backing off before the next attempt.
        case waitingToRetry(nextAttempt: Int)
        /// The callers have their result.
        case finished
    }

    /// How the transfer ends.
    enum Ending: Equatable, Sendable {
        case succeeded
        case failed(WebImageError)
        case cancelled
    }

    enum Action: Equatable, Sendable {
        /// Make the request of this attempt (0 for the first).
        case prepare(attempt: Int)
        /// Send the prepared request of this attempt.
        case send(attempt: Int)
        /// Wait this long, then report ``retryDue()``.
        case scheduleRetry(after: Duration)
        /// Stop what is running (the modifier's task, the request, the back-off); the step's own
        /// end then arrives as an event, which finishes the transfer as cancelled.
        case stopRunningWork
        /// Give the callers their result: the attempt's body when `succeeded`.
        case finish(Ending)
        /// Nothing to do.
        case none
    }

    private(set) var state = State.queued
    /// Whether ``cancel()`` was called; every later step ends the transfer as cancelled.
    private(set) var isCancelled = false

    /// A slot is free: the first attempt begins.
    mutating func start() -> Action {
        guard case .queued = state else { return .none }
        return proceed(to: 0)
    }

    /// The attempt's request is ready.
    mutating func prepared(attempt: Int) -> Action {
        guard case .preparing(attempt) = state else { return .none }
        if isCancelled { return end(.cancelled) }
        state = .sending(attempt: attempt)
        return .send(attempt: attempt)
    }

    /// The attempt ended with a complete, checked body.
    mutating func attemptSucceeded(attempt: Int) -> Action {
        guard isCurrent(attempt) else { return .none }
        return end(.succeeded)
    }

    /// The attempt failed (while preparing or sending); `retryDelay` is the retry policy's
    /// answer for this failure, nil when it is not to be retried.
    mutating func attemptFailed(attempt: Int, error: WebImageError, retryDelay: Duration?) -> Action {
        guard isCurrent(attempt) else { return .none }
        if isCancelled { return end(.cancelled) }
        guard let retryDelay else { return end(.failed(error)) }
        state = .waitingToRetry(nextAttempt: attempt + 1)
        return .scheduleRetry(after: retryDelay)
    }

    /// The back-off is over (or was cut short by ``cancel()``).
    mutating func retryDue() -> Action {
        guard case .waitingToRetry(let next) = state else { return .none }
        return proceed(to: next)
    }

    /// Every caller left, or the downloader cancels everything.
    mutating func cancel() -> Action {
        switch state {
        case .finished:
            return .none
        case .queued:
            // Taken out of the queue by the downloader; if a slot was given to it meanwhile,
            // ``start()`` finishes it, which gives the slot back.
            isCancelled = true
            return .none
        case .preparing, .sending, .waitingToRetry:
            isCancelled = true
            return .stopRunningWork
        }
    }

    private func isCurrent(_ attempt: Int) -> Bool {
        switch state {
        case .preparing(attempt), .sending(attempt): true
        default: false
        }
    }

    private mutating func proceed(to attempt: Int) -> Action {
        if isCancelled { return end(.cancelled) }
        state = .preparing(attempt: attempt)
        return .prepare(attempt: attempt)
    }

    private mutating func end(_ ending: Ending) -> Action {
        state = .finished
        return .finish(ending)
    }
}
