import Synchronization

/// A response held back until the test says so: a ``OriginResponse/Delivery/held(_:)`` response
/// is sent whole when ``release()`` is called, so that a test can act while a request is known to
/// be in flight instead of racing it.
public final class OriginHold: Sendable, Equatable {
    /// Responses waiting for the release, or nil once released. A lock because the handlers that
    /// wait run on event loops and the release comes from a test's task; each holds it briefly.
    private let waiting = Mutex<[@Sendable () -> Void]?>([])

    public init() {}

    /// Sends every response held so far, and from now on sends at once.
    public func release() {
        let actions = waiting.withLock { waiting in
            defer { waiting = nil }
            return waiting ?? []
        }
        for action in actions { action() }
    }

    /// Runs `action` on release, or now if the hold is released already.
    func whenReleased(_ action: @escaping @Sendable () -> Void) {
        let runNow = waiting.withLock { waiting in
            guard waiting != nil else { return true }
            waiting?.append(action)
            return false
        }
        if runNow { action() }
    }

    public static func == (lhs: OriginHold, rhs: OriginHold) -> Bool { lhs === rhs }
}
