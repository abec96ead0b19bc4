/// Which transfers exist and which may run: callers join the transfer for their key (or start
/// one, queued), transfers wait in ``DownloadQueue`` for one of the slots, and leave it when they
/// end or lose their last caller. What a transfer does once started is the downloader's, moved
/// on by ``DownloadTransferStateMachine``.
final class DownloadScheduler: Sendable {
    private struct State {
        var transfers = CoalescingTable<DownloadTransfer.Key, DownloadTransfer>()
        var waiting = DownloadQueue()
        var running = 0
        var lastSequence = 0
        var isSuspended = false
        /// Whether a thread is starting queued transfers.
        var isStarting = false
    }

    private let state = Locked(State())
    private let slots: Int
    private let lifo: Bool

    init(slots: Int, order: ImageDownloaderConfiguration.ExecutionOrder) {
        self.slots = slots
        lifo = order == .lifo
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
                state.waiting.append(transfer, priority: current)
            } else if let previous, current != previous {
                state.waiting.move(transfer, to: current)
            }
            return (transfer, id)
        }
    }

    /// Changes a caller's priority; a waiting transfer moves to its callers' new highest.
    func setPriority(_ priority: LoadRequestOptions.Priority, of id: Int, in transfer: DownloadTransfer) {
        let updated = transfer.state.withLock { $0.subscribers.setPriority(priority, of: id) ?? priority }
        state.withLock { $0.waiting.move(transfer, to: updated) }
    }

    /// Removes a caller; true when it was the transfer's last, which is then forgotten (and
    /// taken out of the queue if it was waiting) and should be cancelled.
    func leave(_ id: Int, from transfer: DownloadTransfer) -> Bool {
        let (wasLast, wasQueued) = transfer.state.withLock { state in (state.subscribers.remove(id), state.isQueued) }
        guard wasLast else { return false }
        state.withLock { state in
            state.transfers.remove(transfer, for: transfer.key)
            if wasQueued { state.waiting.remove(transfer) }
        }
        return true
    }

    /// Forgets every transfer and empties the queue; returns the transfers, to cancel.
    func removeAll() -> [DownloadTransfer] {
        state.withLock { state in
            defer { state.waiting = DownloadQueue() }
            return state.transfers.removeAll()
        }
    }

    /// Gives a running transfer's slot back and forgets it.
    func ended(_ transfer: DownloadTransfer) {
        state.withLock { state in
            state.running -= 1
            state.transfers.remove(transfer, for: transfer.key)
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
    func startWaiting(_ start: (DownloadTransfer) -> Void) {
        let isFirst = state.withLock { state in
            defer { state.isStarting = true }
            return !state.isStarting
        }
        guard isFirst else { return }
        while let transfer = next() {
            transfer.state.withLock { $0.isQueued = false }
            start(transfer)
        }
    }

    /// Takes the next transfer off the queue when a slot is free: highest priority, then the
    /// oldest (FIFO) or newest (LIFO) of that priority. When there is none, the caller stops
    /// being the thread that starts transfers, in the same critical section.
    private func next() -> DownloadTransfer? {
        state.withLock { state in
            guard !state.isSuspended, state.running < slots, let next = state.waiting.next(lifo: lifo) else {
                state.isStarting = false
                return nil
            }
            state.running += 1
            return next
        }
    }
}
