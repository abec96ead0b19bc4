import WebImage

/// Runs `work` and returns its result, or throws `error` once `limit` has passed, whichever
/// comes first. The work is not stopped when the deadline wins: a fetch or an encode others share
/// goes on to finish and fill the caches; only this caller stops waiting.
func withDeadline<Value: Sendable>(
    _ limit: Duration, error: ProxyError, _ work: @escaping @Sendable () async throws(ProxyError) -> Value
) async throws(ProxyError) -> Value {
    let outcome = Outcome<Value>()
    let result: Result<Value, ProxyError> = await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            outcome.attach(continuation)
            Task {
                do throws(ProxyError) {
                    outcome.finish(.success(try await work()))
                } catch {
                    outcome.finish(.failure(error))
                }
            }
            let timer = Task {
                try? await Task.sleep(for: limit)
                if !Task.isCancelled { outcome.finish(.failure(error)) }
            }
            outcome.onFinish { timer.cancel() }
        }
    } onCancel: {
        outcome.finish(.failure(ProxyError(status: 499, "the client went away")))
    }
    return try result.get()
}

/// The first of several results, handed to one waiting continuation exactly once.
private final class Outcome<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<Value, ProxyError>, Never>?
        var result: Result<Value, ProxyError>?
        var onFinish: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())

    func attach(_ continuation: CheckedContinuation<Result<Value, ProxyError>, Never>) {
        let early = state.withLock { state in
            guard let result = state.result else {
                state.continuation = continuation
                return nil as Result<Value, ProxyError>?
            }
            return result
        }
        if let early { continuation.resume(returning: early) }
    }

    func onFinish(_ action: @escaping @Sendable () -> Void) {
        let finished = state.withLock { state in
            if state.result == nil { state.onFinish.append(action) }
            return state.result != nil
        }
        if finished { action() }
    }

    func finish(_ result: Result<Value, ProxyError>) {
        let (continuation, actions) = state.withLock {
            state -> (CheckedContinuation<Result<Value, ProxyError>, Never>?, [@Sendable () -> Void]) in
            guard state.result == nil else { return (nil, []) }
            state.result = result
            defer {
                state.continuation = nil
                state.onFinish = []
            }
            return (state.continuation, state.onFinish)
        }
        continuation?.resume(returning: result)
        for action in actions { action() }
    }
}
