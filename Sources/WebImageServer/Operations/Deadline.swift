import NIOCore
import WebImage

/// Runs `work` and returns its result, or throws `error` once `limit` has passed, or 499 once
/// `closed` (the client's connection) completes, whichever comes first; either way the rest is
/// cancelled, so a deadline or a departed client stops the work it bounds (work that others
/// share goes on while they wait: ``InFlight`` cancels it only when its last waiter has gone).
/// `work` must end soon once cancelled; everything the proxy runs under a deadline does.
///
/// Why the connection: Hummingbird does not cancel a handler when its connection closes; without
/// this, a request whose client had left went on waiting for a slot, downloading and processing
/// (70 abandoned requests still held 2 slots and 43 places in the queue two minutes later). Only
/// misses run here, so a cache hit pays for none of it.
func withDeadline<Value: Sendable>(
    _ limit: Duration, error: ProxyError, closed: EventLoopFuture<Void>? = nil,
    _ work: @escaping @Sendable () async throws(ProxyError) -> Value
) async throws(ProxyError) -> Value {
    let (closing, signal) = AsyncStream<Void>.makeStream()
    closed?.whenComplete { _ in signal.finish() }
    let result = await withTaskGroup(of: Result<Value, ProxyError>?.self) { group in
        group.addTask {
            do throws(ProxyError) { return .success(try await work()) } catch { return .failure(error) }
        }
        group.addTask {
            // A cancelled sleep is the work having finished first (or the caller having gone).
            do { try await Task.sleep(for: limit) } catch { return nil }
            return .failure(error)
        }
        if closed != nil {
            group.addTask {
                for await _ in closing {}
                return Task.isCancelled ? nil : .failure(ProxyError(status: 499, "the client went away"))
            }
        }
        var outcome: Result<Value, ProxyError>?
        while outcome == nil, let next = await group.next() { outcome = next }
        signal.finish()
        group.cancelAll()
        return outcome ?? .failure(ProxyError(status: 499, "the client went away"))
    }
    return try result.get()
}

/// The first of several results, handed to the one waiter exactly once: a pool job's result, or
/// the cancellation that stopped waiting for it, whichever comes first.
final class FirstResult<Value: Sendable>: Sendable {
    private let state = Locked<(continuation: CheckedContinuation<Value, Never>?, value: Value?)>((nil, nil))

    /// Keeps `value` and wakes the waiter, unless a value came first.
    func finish(_ value: Value) {
        let continuation = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: value)
    }

    /// The first value, now or once it comes.
    func wait() async -> Value {
        await withCheckedContinuation { continuation in
            let early = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.continuation = continuation
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }
    }
}
