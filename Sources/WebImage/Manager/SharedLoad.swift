/// The work of one load (cache query, download, decode, transform, store) shared by every
/// caller of the same ``SharedLoadKey``. It runs in one task; when the last caller leaves, the
/// task is cancelled, which cancels the download with it; when a caller with a higher priority
/// joins, the task is escalated, which raises the download in the loader's queue.
final class SharedLoad: Sendable {
    typealias Subscriber = Subscribers<SharedLoadEvent, LoadRequestOptions.Priority>.Subscriber

    private struct State {
        var subscribers = Subscribers<SharedLoadEvent, LoadRequestOptions.Priority>()
        var task: Task<Void, Never>?
        /// The cached image delivered before a revalidation, for callers who join later.
        var cached: ImageResult?
    }

    let key: SharedLoadKey
    private let state = Locked(State())

    init(key: SharedLoadKey) {
        self.key = key
    }

    /// Adds a caller; returns its id, the cached image it missed (if any), and whether this
    /// caller raised the load's priority (then ``escalate()`` passes that on).
    func add(_ subscriber: Subscriber) -> (id: Int, cached: ImageResult?, raisedPriority: Bool) {
        state.withLock { state in
            let (id, previous, current) = state.subscribers.add(subscriber)
            return (id, state.cached, previous.map { current > $0 } ?? false)
        }
    }

    /// Removes a caller; true when none is left and the work should stop.
    func remove(_ id: Int) -> Bool {
        state.withLock { $0.subscribers.remove(id) }
    }

    /// Keeps the task doing the work, made at `priority`: cancelled at once if every caller left
    /// before it was kept, escalated if one raised the priority meanwhile (only then: an
    /// escalation costs the task's status record a compare-and-swap, on every miss otherwise).
    func start(_ task: Task<Void, Never>, priority: LoadRequestOptions.Priority) {
        let (abandoned, raised) = state.withLock { state in
            state.task = task
            return (state.subscribers.isEmpty, (state.subscribers.priority ?? priority) > priority)
        }
        if abandoned { task.cancel() } else if raised { escalate() }
    }

    /// Escalates the task to the callers' highest priority (a task is never lowered).
    func escalate() {
        guard let (task, priority) = state.withLock({ state in state.task.map { ($0, state.subscribers.priority ?? .normal) } }) else {
            return
        }
        task.escalatePriority(to: priority.taskPriority)
    }

    func cancel() {
        state.withLock { $0.task }?.cancel()
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

    /// Marks the work done and returns the callers to give the result to. The task is let go:
    /// nothing is left to cancel.
    func finish() -> [Subscriber] {
        state.withLock { state in
            state.task = nil
            state.cached = nil
            return state.subscribers.finish()
        }
    }
}
