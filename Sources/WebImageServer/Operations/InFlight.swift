import WebImage

/// Concurrent identical requests share one piece of work: the first starts it, the others wait
/// for the same result, and the entry is gone once it finishes (the result cache keeps it after
/// that). Waiting is counted: a waiter whose task is cancelled (its client went away, or its
/// deadline passed) stops waiting at once with 499, and when the last waiter has gone the work
/// itself is cancelled, so that nobody's abandoned request goes on holding a download or a slot.
final class InFlight<Value: Sendable>: Sendable {
    /// One running piece of work and who waits for it.
    private struct Entry {
        var task: Task<Void, Never>
        var waiters: [Int: CheckedContinuation<Result<Value, ProxyError>, Never>] = [:]
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var nextWaiter = 0
    }

    private let state = Locked(State())

    /// How many pieces of work run now.
    var count: Int { state.withLock { $0.entries.count } }
    /// How many callers wait for them, together.
    var waiterCount: Int { state.withLock { $0.entries.values.reduce(0) { $0 + $1.waiters.count } } }

    /// The result of the work running for `key`, or of `work` started now.
    /// - Throws: the work's error, or 499 when this caller's task is cancelled first.
    func run(_ key: String, _ work: @escaping @Sendable () async throws(ProxyError) -> Value) async throws(ProxyError) -> Value {
        let waiter = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let result: Result<Value, ProxyError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                join(key, waiter: waiter, continuation: continuation, work)
            }
        } onCancel: {
            leave(key, waiter: waiter)
        }
        return try result.get()
    }

    private func join(
        _ key: String, waiter: Int, continuation: CheckedContinuation<Result<Value, ProxyError>, Never>,
        _ work: @escaping @Sendable () async throws(ProxyError) -> Value
    ) {
        let cancelled = state.withLock { state in
            if Task.isCancelled { return true }
            if state.entries[key] != nil {
                state.entries[key]?.waiters[waiter] = continuation
                return false
            }
            // Started under the lock, so that nothing finishes before the entry exists; its
            // first step is outside it.
            let task = Task { [self] in
                let result: Result<Value, ProxyError>
                do throws(ProxyError) { result = .success(try await work()) } catch { result = .failure(error) }
                finish(key, result)
            }
            state.entries[key] = Entry(task: task, waiters: [waiter: continuation])
            return false
        }
        if cancelled { continuation.resume(returning: .failure(Self.gone)) }
    }

    /// A waiter stops waiting; the last one's leaving cancels the work.
    private func leave(_ key: String, waiter: Int) {
        let (continuation, abandoned) = state.withLock { state in
            guard let continuation = state.entries[key]?.waiters.removeValue(forKey: waiter) else {
                return (nil as CheckedContinuation<Result<Value, ProxyError>, Never>?, nil as Task<Void, Never>?)
            }
            guard state.entries[key]?.waiters.isEmpty == true else { return (continuation, nil) }
            return (continuation, state.entries.removeValue(forKey: key)?.task)
        }
        continuation?.resume(returning: .failure(Self.gone))
        abandoned?.cancel()
    }

    private func finish(_ key: String, _ result: Result<Value, ProxyError>) {
        let waiters = state.withLock { state in state.entries.removeValue(forKey: key)?.waiters.values.map { $0 } ?? [] }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    private static var gone: ProxyError { ProxyError(status: 499, "the client went away") }
}
