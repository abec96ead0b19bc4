/// The work of one load (cache query, download, decode, transform, store) shared by every
/// caller of the same ``SharedLoadKey``. It runs in one task; when the last caller leaves, the
/// task is cancelled, which cancels the download with it.
final class SharedLoad: Sendable {
    struct Subscriber: Sendable {
        let deliver: @Sendable (SharedLoadEvent) -> Void
        let wantsPartialImages: Bool
        let priority: LoadRequestOptions.Priority
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var task: Task<Void, Never>?
        var token: LoadToken?
        /// The cached image delivered before a revalidation, for callers who join later.
        var cached: ImageResult?
        var isDone = false
    }

    let key: SharedLoadKey
    private let state = Locked(State())

    init(key: SharedLoadKey) {
        self.key = key
    }

    /// Adds a caller; returns its id and the cached image it missed, if any.
    func add(_ subscriber: Subscriber) -> (id: Int, cached: ImageResult?, raisedPriority: LoadRequestOptions.Priority?, token: LoadToken?) {
        state.withLock { state in
            let before = state.subscribers.values.map(\.priority).max()
            state.nextID += 1
            state.subscribers[state.nextID] = subscriber
            let raised = before.map { subscriber.priority > $0 ? subscriber.priority : nil } ?? nil
            return (state.nextID, state.cached, raised, state.token)
        }
    }

    /// Removes a caller; true when none is left and the work should stop.
    func remove(_ id: Int) -> Bool {
        state.withLock { state in
            guard state.subscribers.removeValue(forKey: id) != nil else { return false }
            return state.subscribers.isEmpty && !state.isDone
        }
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
        state.withLock { $0.subscribers.values.map(\.priority).max() ?? .normal }
    }

    /// Whether any caller wants partial images.
    var wantsPartialImages: Bool {
        state.withLock { $0.subscribers.values.contains { $0.wantsPartialImages } }
    }

    /// Sends an event to the current callers (partial images only to those who asked).
    func broadcast(_ event: SharedLoadEvent) {
        let subscribers = state.withLock { state -> [Subscriber] in
            guard !state.isDone else { return [] }
            if case .image(let result, isPartial: false) = event { state.cached = result }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers {
            if case .image(_, isPartial: true) = event, !subscriber.wantsPartialImages { continue }
            subscriber.deliver(event)
        }
    }

    /// Marks the work done and returns the callers to give the result to.
    func finish() -> [Subscriber] {
        state.withLock { state in
            state.isDone = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
    }
}
