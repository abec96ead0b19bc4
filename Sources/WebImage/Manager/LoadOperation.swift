public import Foundation

/// One caller's load from ``ImageManager`` (SDWebImage's combined operation). Cancelling it
/// stops that caller's callbacks at once: a cancelled load never calls its completion. Work it
/// shares with other callers (the download, the decode) stops only when all of them cancel.
public final class LoadOperation: ImageOperation, Hashable {
    private struct State {
        var isCancelled = false
        var isFinished = false
        var onCancel: (@Sendable () -> Void)?
        /// Run once, when the load ends either way, then dropped: it may hold what holds this
        /// operation (the async API's continuation holds the action that cancels it).
        var onFinish: (@Sendable (LoadOperation) -> Void)?
    }

    /// The URL being loaded; nil for a load that failed because it had none.
    public let url: URL?
    private let state: Locked<State>

    init(url: URL?, onFinish: (@Sendable (LoadOperation) -> Void)? = nil) {
        self.url = url
        state = Locked(State(onFinish: onFinish))
    }

    /// Stops this load's callbacks and releases its share of the work.
    public func cancel() {
        _ = cancelIfRunning()
    }

    /// Cancels; false when the load had already finished or been cancelled, so its last
    /// callback is (or was) delivered instead.
    func cancelIfRunning() -> Bool {
        let (cancelled, action, onFinish) = state.withLock {
            state -> (Bool, (@Sendable () -> Void)?, (@Sendable (LoadOperation) -> Void)?) in
            guard !state.isCancelled, !state.isFinished else { return (false, nil, nil) }
            state.isCancelled = true
            defer { (state.onCancel, state.onFinish) = (nil, nil) }
            return (true, state.onCancel, state.onFinish)
        }
        guard cancelled else { return false }
        action?()
        onFinish?(self)
        return true
    }

    /// Whether ``cancel()`` was called before the load finished.
    public var isCancelled: Bool {
        state.withLock { $0.isCancelled }
    }

    /// Whether the load delivered its last callback (or was cancelled).
    public var isFinished: Bool {
        state.withLock { $0.isFinished || $0.isCancelled }
    }

    /// Sets what cancelling does; runs it at once if the operation is already cancelled.
    func setCancelHandler(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state in
            guard !state.isCancelled else { return true }
            state.onCancel = handler
            return false
        }
        if runNow { handler() }
    }

    /// Marks the load finished; false when it was cancelled (so nothing may be delivered) or had
    /// finished already.
    func finish() -> Bool {
        let (finished, onFinish) = state.withLock { state -> (Bool, (@Sendable (LoadOperation) -> Void)?) in
            guard !state.isCancelled, !state.isFinished else { return (false, nil) }
            state.isFinished = true
            defer { (state.onCancel, state.onFinish) = (nil, nil) }
            return (true, state.onFinish)
        }
        onFinish?(self)
        return finished
    }

    public static func == (lhs: LoadOperation, rhs: LoadOperation) -> Bool {
        lhs === rhs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
