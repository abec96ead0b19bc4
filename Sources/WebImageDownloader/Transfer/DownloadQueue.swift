/// Transfers waiting for a free slot, in one lane per priority. Taking the next one is O(1):
/// the highest non-empty lane, from its front (FIFO) or its back (LIFO). Lanes stay ordered by
/// arrival, so a transfer moved to another lane takes its arrival place there.
struct DownloadQueue {
    private var lanes: [[DownloadTransfer]] = [[], [], []]
    /// How many entries at the front of each lane were already taken (FIFO takes from the front
    /// without shifting the array; the taken prefix is dropped once it is large).
    private var taken = [0, 0, 0]

    var isEmpty: Bool {
        lanes.indices.allSatisfy { lanes[$0].count == taken[$0] }
    }

    /// The highest priority with a transfer waiting (as the lane's raw value), if any.
    var highestPriority: Int? {
        lanes.indices.reversed().first { lanes[$0].count > taken[$0] }
    }

    mutating func append(_ transfer: DownloadTransfer, priority: LoadRequestOptions.Priority) {
        insert(transfer, into: priority.rawValue)
    }

    /// Takes the transfer that should start next.
    mutating func next(lifo: Bool) -> DownloadTransfer? {
        for lane in lanes.indices.reversed() where lanes[lane].count > taken[lane] {
            if lifo { return lanes[lane].removeLast() }
            let transfer = lanes[lane][taken[lane]]
            taken[lane] += 1
            if taken[lane] > 256 && taken[lane] * 2 > lanes[lane].count {
                lanes[lane].removeFirst(taken[lane])
                taken[lane] = 0
            }
            return transfer
        }
        return nil
    }

    /// Removes a transfer wherever it waits; false when it is not waiting.
    @discardableResult
    mutating func remove(_ transfer: DownloadTransfer) -> Bool {
        for lane in lanes.indices {
            if let index = lanes[lane][taken[lane]...].firstIndex(where: { $0 === transfer }) {
                lanes[lane].remove(at: index)
                return true
            }
        }
        return false
    }

    /// Moves a waiting transfer to the lane of `priority`.
    mutating func move(_ transfer: DownloadTransfer, to priority: LoadRequestOptions.Priority) {
        guard remove(transfer) else { return }
        insert(transfer, into: priority.rawValue)
    }

    private mutating func insert(_ transfer: DownloadTransfer, into lane: Int) {
        // New arrivals are the newest: they go at the end without a search.
        if lanes[lane].last.map({ $0.sequence < transfer.sequence }) ?? true {
            lanes[lane].append(transfer)
            return
        }
        let waiting = lanes[lane][taken[lane]...]
        let position = waiting.firstIndex { $0.sequence > transfer.sequence } ?? lanes[lane].endIndex
        lanes[lane].insert(transfer, at: position)
    }
}
