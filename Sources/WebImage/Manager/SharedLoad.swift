/// The work of one load (cache query, download, decode, transform, store) shared by every
/// caller of the same ``SharedLoadKey``. It runs in one task; when the last caller leaves, the
/// task is cancelled, which cancels the download with it.
final class SharedLoad: Sendable {
    typealias Subscriber = Subscribers<SharedLoadEvent, LoadRequestOptions.Priority>.Subscriber

    private struct State {
        var subscribers = Subscribers<SharedLoadEvent, LoadRequestOptions.Priority>()
        var task: Task<Void, Never>?
        var token: LoadToken?
        /// The cached image delivered before a revalidation, for callers who join later.
        var cached: ImageResult?
    }

    let key: SharedLoadKey
    private let state = Locked(State())

    init(key: SharedLoadKey) {
        self.key = key
    }

    /// Adds a caller; returns its id, the cached image it missed (if any), the load's priority
    /// when this caller raised it, and the loader's token to pass that on to.
    func add(_ subscriber: Subscriber) -> (id: Int, cached: ImageResult?, raisedPriority: LoadRequestOptions.Priority?, token: LoadToken?) {
        state.withLock { state in
            let (id, previous, current) = state.subscribers.add(subscriber)
            let raised = previous.map { current > $0 ? current : nil } ?? nil
            return (id, state.cached, raised, state.token)
        }
    }

    /// Removes a caller; true when none is left and the work should stop.
    func remove(_ id: Int) -> Bool {
        state.withLock { $0.subscribers.remove(id) }
    }

    func start(_ task: Task<Void, Never>) {
        state.withLock { $0.task = task }
    }

    func cancel() {
        let (task, token) = state.withLock { state in (state.task, state.token) }
        task?.cancel()
        token?.cancel()
    }

    /// Keeps the loader's token, to pass on priority changes and cancellation.
    func setToken(_ token: LoadToken) {
        let cancelled = state.withLock { state in
            state.token = token
            return state.subscribers.isEmpty
        }
        if cancelled { token.cancel() }
    }

    /// The highest priority among the callers.
    var priority: LoadRequestOptions.Priority {
        state.withLock { $0.subscribers.priority ?? .normal }
    }

    /// Whether any caller wants partial images.
    var wantsPartialImages: Bool {
        state.withLock { $0.subscribers.wantsPartial }
    }

    /// Sends an event to the current callers (partial images only to those who asked).
    func broadcast(_ event: SharedLoadEvent) {
        let recipients = state.withLock { state -> [Subscriber] in
            if case .image(let result, isPartial: false) = event, !state.subscribers.isFinished { state.cached = result }
            if case .image(_, isPartial: true) = event { return state.subscribers.recipients(partial: true) }
            return state.subscribers.recipients(partial: false)
        }
        for subscriber in recipients { subscriber.deliver(event) }
    }

    /// Marks the work done and returns the callers to give the result to. The token and the
    /// task are let go: nothing is left to cancel.
    func finish() -> [Subscriber] {
        state.withLock { state in
            state.token = nil
            state.task = nil
            state.cached = nil
            return state.subscribers.finish()
        }
    }
}
