import WebImage

/// At most `concurrency` results are processed at once; up to `queueLength` more wait in arrival
/// order; beyond that a request is refused at once (503 with `Retry-After`), so that a burst costs
/// memory for the queue, not for a pile of half-done images. Downloads take no slot (the
/// downloader bounds them), so a slow origin cannot starve processing. A waiting request whose
/// task is cancelled (its client went away, or its deadline passed) leaves the queue.
final class AdmissionGate: Sendable {
    private struct State {
        var running = 0
        var waiting: [(id: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextID = 0
    }

    let concurrency: Int
    let queueLength: Int
    private let state = Locked(State())

    init(concurrency: Int, queueLength: Int) {
        self.concurrency = max(1, concurrency)
        self.queueLength = max(0, queueLength)
    }

    /// Requests running now.
    var running: Int { state.withLock { $0.running } }
    /// Requests waiting for a slot.
    var queued: Int { state.withLock { $0.waiting.count } }

    /// Waits for a slot. Throws 503 when the queue is full and 499 when the task is cancelled
    /// while it waits. Every successful call is matched by one ``leave()``.
    func enter() async throws(ProxyError) {
        enum Admission {
            case now, full
            case wait(Int)
        }
        let admission: Admission = state.withLock { state in
            if state.running < concurrency {
                state.running += 1
                return .now
            }
            guard state.waiting.count < queueLength else { return .full }
            state.nextID += 1
            return .wait(state.nextID)
        }
        switch admission {
        case .now: return
        case .full: throw ProxyError(status: 503, "the server is busy: \(concurrency) running, \(queueLength) waiting", retryAfter: 1)
        case .wait(let id):
            let admitted = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let cancelled = state.withLock { state in
                        if Task.isCancelled { return true }
                        state.waiting.append((id, continuation))
                        return false
                    }
                    if cancelled { continuation.resume(returning: false) }
                }
            } onCancel: {
                let continuation = state.withLock { state in
                    state.waiting.firstIndex { $0.id == id }.map { state.waiting.remove(at: $0).continuation }
                }
                continuation?.resume(returning: false)
            }
            guard admitted else { throw ProxyError(status: 499, "the client went away while the request waited") }
        }
    }

    /// Frees a slot: the longest-waiting request takes it.
    func leave() {
        let next = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil as CheckedContinuation<Bool, Never>?
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume(returning: true)
    }
}

extension AdmissionGate {
    /// Runs `job` in the work pool once a slot is free, and keeps the slot until the job has
    /// really ended: the slot follows the work, not the request. A caller cancelled while it
    /// waits for a slot leaves the queue (499); one cancelled while its job runs stops waiting at
    /// once, and the job, whose `isCancelled` now answers true, stops at its next step.
    ///
    /// `limit` bounds the job from the moment it has a slot: past it the caller gets `timeout`
    /// and the job is cancelled as above.
    func run<Output: Sendable>(
        in pool: WorkPool, limit: Duration, timeout: ProxyError,
        _ job: @escaping @Sendable (_ isCancelled: @Sendable () -> Bool) throws(ProxyError) -> Output
    ) async throws(ProxyError) -> Output {
        try await enter()
        let cancelled = Locked(false)
        let outcome = FirstResult<Result<Output, ProxyError>>()
        pool.submit(priority: .normal) { [self] in
            let isCancelled: @Sendable () -> Bool = { cancelled.withLock { $0 } }
            let result = isCancelled() ? .failure(Self.gone) : Result { () throws(ProxyError) in try job(isCancelled) }
            // The slot is free before the waiter hears the result: finishing first let its client
            // send the next request while this thread still held the slot, and get a 503 (seen
            // once under load in "a full queue answers 503 with Retry-After at once").
            leave()
            outcome.finish(result)
        }
        return try await withDeadline(limit, error: timeout) { () async throws(ProxyError) -> Output in
            let result = await withTaskCancellationHandler {
                await outcome.wait()
            } onCancel: {
                cancelled.withLock { $0 = true }
                outcome.finish(.failure(Self.gone))
            }
            return try result.get()
        }
    }

    private static var gone: ProxyError { ProxyError(status: 499, "the request was cancelled") }
}
