/// Which transfers exist and which may run: callers join the transfer for their key (or start
/// one, queued), transfers wait in ``DownloadQueue`` for one of the slots, and leave it when they
/// end or lose their last caller. What a transfer does once started is the downloader's, in
/// the transfer's own task.
final class DownloadScheduler: Sendable {
    fileprivate struct State {
        var transfers = CoalescingTable<DownloadTransfer.Key, DownloadTransfer>()
        /// Where transfers wait without a politeness policy.
        var waiting = DownloadQueue()
        /// Where they wait with one, per host.
        var perHost: HostQueue?
        /// When a timer will look at the queue again (a rate or a hold keeps something waiting).
        var pendingWake: ContinuousClock.Instant?
        var running = 0
        var lastSequence = 0
        var isSuspended = false
        /// Whether a thread is starting queued transfers.
        var isStarting = false
    }

    private let state = Locked(State())
    private let slots: Int
    private let lifo: Bool

    init(slots: Int, order: ImageDownloaderConfiguration.ExecutionOrder, politeness: HostPoliteness? = nil) {
        self.slots = slots
        lifo = order == .lifo
        state.withLock { $0.perHost = politeness.map(HostQueue.init) }
    }

    /// Adds a caller to the transfer for `key`, made and queued if there is none; a caller with
    /// a higher priority moves a waiting transfer up. Returns the transfer and the caller's id.
    func join(_ key: DownloadTransfer.Key, options: LoadRequestOptions, subscriber: DownloadTransfer.Subscriber) -> (
        transfer: DownloadTransfer, id: Int
    ) {
        state.withLock { state in
            let sequence = state.lastSequence + 1
            let (transfer, isNew) = state.transfers.join(key) { DownloadTransfer(key: key, options: options, sequence: sequence) }
            let (id, previous, current) = transfer.state.withLock { $0.subscribers.add(subscriber) }
            if isNew {
                state.lastSequence = sequence
                state.enqueue(transfer, priority: current)
            } else if let previous, current != previous {
                state.move(transfer, to: current)
            }
            return (transfer, id)
        }
    }

    /// Changes a caller's priority; a waiting transfer moves to its callers' new highest.
    func setPriority(_ priority: LoadRequestOptions.Priority, of id: Int, in transfer: DownloadTransfer) {
        let updated = transfer.state.withLock { $0.subscribers.setPriority(priority, of: id) ?? priority }
        state.withLock { $0.move(transfer, to: updated) }
    }

    /// Removes a caller; true when it was the transfer's last, which is then forgotten (and
    /// taken out of the queue if it was waiting) and should be cancelled.
    ///
    /// One critical section with ``join(_:options:subscriber:)`` (the scheduler's lock, then the
    /// transfer's, in that order in both): with the caller removed under the transfer's lock
    /// alone, a join could find the transfer still in the table after its last caller had left
    /// and attach to a transfer about to be cancelled, and fail with `.cancelled` a load nobody
    /// cancelled.
    func leave(_ id: Int, from transfer: DownloadTransfer) -> Bool {
        state.withLock { state in
            let (wasLast, wasQueued) = transfer.state.withLock { transferState in
                (transferState.subscribers.remove(id), transferState.isQueued)
            }
            guard wasLast else { return false }
            state.transfers.remove(transfer, for: transfer.key)
            if wasQueued { state.dequeue(transfer) }
            return true
        }
    }

    /// Forgets every transfer and empties the queue; returns the transfers, to cancel.
    func removeAll() -> [DownloadTransfer] {
        state.withLock { state in
            defer {
                state.waiting = DownloadQueue()
                state.perHost = state.perHost.map { HostQueue($0.politeness) }
            }
            return state.transfers.removeAll()
        }
    }

    /// Gives a running transfer's slot back and forgets it.
    func ended(_ transfer: DownloadTransfer) {
        state.withLock { state in
            state.running -= 1
            state.transfers.remove(transfer, for: transfer.key)
            state.perHost?.ended(host: HostQueue.key(for: transfer), now: .now)
        }
    }

    /// Holds the waiting transfers of `transfer`'s host for `duration` (a `Retry-After`), when
    /// there is a politeness policy.
    func hold(hostOf transfer: DownloadTransfer, for duration: Duration) {
        state.withLock { $0.perHost?.hold(HostQueue.key(for: transfer), for: duration, now: .now) }
    }

    /// A timer set for `instant` went off.
    func wakeDue(_ instant: ContinuousClock.Instant) {
        state.withLock { state in
            if state.pendingWake == instant { state.pendingWake = nil }
        }
    }

    var isSuspended: Bool {
        get { state.withLock { $0.isSuspended } }
        set { state.withLock { $0.isSuspended = newValue } }
    }

    /// Transfers running or waiting.
    var count: Int { state.withLock { $0.transfers.count } }

    /// Starts queued transfers with `start` while there are free slots. One thread at a time
    /// does it: a transfer that ends at once (a URL the client refuses) calls back in here as it
    /// ends, and without this would nest one call deeper for every transfer behind it.
    ///
    /// Returns when to call again if a host's rate or hold keeps a transfer waiting and no timer
    /// is set for that time or earlier yet (the caller sets one, then calls ``wakeDue(_:)``).
    func startWaiting(_ start: (DownloadTransfer) -> Void) -> ContinuousClock.Instant? {
        let isFirst = state.withLock { state in
            defer { state.isStarting = true }
            return !state.isStarting
        }
        guard isFirst else { return nil }
        var wake: ContinuousClock.Instant?
        while true {
            let (transfer, due) = next()
            wake = due
            guard let transfer else { break }
            transfer.state.withLock { $0.isQueued = false }
            start(transfer)
        }
        return wake
    }

    /// Takes the next transfer off the queue when a slot is free: highest priority, then the
    /// oldest (FIFO) or newest (LIFO) of that priority; with a politeness policy, also within
    /// each host's limits, hosts taking turns. When there is none, the caller stops being the
    /// thread that starts transfers, in the same critical section, and learns when a timer
    /// should look again.
    private func next() -> (DownloadTransfer?, wake: ContinuousClock.Instant?) {
        state.withLock { state in
            guard !state.isSuspended, state.running < slots else {
                state.isStarting = false
                return (nil, nil)
            }
            var transfer: DownloadTransfer?
            var wake: ContinuousClock.Instant?
            if state.perHost != nil {
                (transfer, wake) = state.perHost!.next(lifo: lifo, now: .now)
            } else {
                transfer = state.waiting.next(lifo: lifo)
            }
            guard let transfer else {
                state.isStarting = false
                guard let wake else { return (nil, nil) }
                if let pending = state.pendingWake, pending <= wake { return (nil, nil) }
                state.pendingWake = wake
                return (nil, wake)
            }
            state.running += 1
            return (transfer, nil)
        }
    }
}

extension DownloadScheduler.State {
    fileprivate mutating func enqueue(_ transfer: DownloadTransfer, priority: LoadRequestOptions.Priority) {
        if perHost != nil {
            perHost!.append(transfer, priority: priority, host: HostQueue.key(for: transfer))
        } else {
            waiting.append(transfer, priority: priority)
        }
    }

    fileprivate mutating func move(_ transfer: DownloadTransfer, to priority: LoadRequestOptions.Priority) {
        if perHost != nil {
            perHost!.move(transfer, to: priority, host: HostQueue.key(for: transfer))
        } else {
            waiting.move(transfer, to: priority)
        }
    }

    fileprivate mutating func dequeue(_ transfer: DownloadTransfer) {
        if perHost != nil {
            perHost!.remove(transfer, host: HostQueue.key(for: transfer), now: .now)
        } else {
            waiting.remove(transfer)
        }
    }
}
