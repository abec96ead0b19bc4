/// One asynchronous run of a prefetcher (``ImagePrefetcher/prefetch(_:making:)``): its place in
/// the prefetcher's line beside the batches, and the slot its sequence waits for.
final class PrefetchRun: Sendable {
    private struct State {
        /// The run's wait for a slot, while it waits.
        var waiter: CheckedContinuation<Bool, Never>?
        var isEnded = false
        var hasFailed = false
    }

    // Small state taken by the waiting task, the prefetcher granting slots, and cancellation.
    private let state = Locked(State())

    /// Waits until the prefetcher grants the run a slot (true), or the run ends: its task is
    /// cancelled, or ``end()`` (false). `look` runs once the wait is registered, to grant a free
    /// slot at once.
    func waitForSlot(look: () -> Void) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ended = state.withLock { state in
                    guard !state.isEnded else { return true }
                    state.waiter = continuation
                    return false
                }
                if ended { continuation.resume(returning: false) } else { look() }
            }
        } onCancel: {
            end()
        }
    }

    /// The wait, taken, when the run is waiting for a slot: the prefetcher, having counted the
    /// slot as taken, resumes it with true.
    func takeWaiter() -> CheckedContinuation<Bool, Never>? {
        state.withLock { state in
            defer { state.waiter = nil }
            return state.waiter
        }
    }

    /// Whether the run is over: the prefetcher drops it from its line.
    var isEnded: Bool {
        state.withLock { $0.isEnded }
    }

    /// Whether an entry's work threw: the run ends with that error, not a cancellation.
    var hasFailed: Bool {
        state.withLock { $0.hasFailed }
    }

    /// Ends the run: its wait, if any, ends with no slot, and so does every later one.
    /// `failed`: because an entry's work threw.
    func end(failed: Bool = false) {
        let waiter = state.withLock { state in
            state.isEnded = true
            if failed { state.hasFailed = true }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: false)
    }
}
