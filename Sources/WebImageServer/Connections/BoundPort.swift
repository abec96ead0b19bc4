import WebImage

/// A port learned once a listener binds, and whoever waits for it until then.
final class BoundPort: Sendable {
    // Locked: the listener binds on an event loop while callers wait from any task.
    private let state = Locked<(port: Int?, waiters: [CheckedContinuation<Int, Never>])>((nil, []))

    /// The port, now or once bound.
    var value: Int {
        get async {
            await withCheckedContinuation { continuation in
                let port = state.withLock { state in
                    if state.port == nil { state.waiters.append(continuation) }
                    return state.port
                }
                if let port { continuation.resume(returning: port) }
            }
        }
    }

    func bound(_ port: Int) {
        let waiters = state.withLock { state in
            defer { state = (port, []) }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: port) }
    }
}
