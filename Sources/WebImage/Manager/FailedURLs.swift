public import Foundation
import Synchronization

/// The URLs whose load failed for good (SDWebImage's `failedURLs`): loading them again fails at
/// once with `WebImageError.Code.blockedURL` unless the load asks `.retryFailed`.
///
/// Unlike SDWebImage's set, the list is bounded and ages: it holds at most ``capacity`` URLs (the
/// oldest entry leaves for a new one) and an entry older than ``lifetime`` no longer blocks, so a
/// long-running process (a crawler, a server) neither grows without end nor refuses forever a URL
/// whose origin has been fixed since.
public final class FailedURLs: Sendable {
    /// How many URLs the list holds at most. Default 10,000.
    public let capacity: Int
    /// How long an entry blocks its URL. Default one hour.
    public let lifetime: Duration

    private struct State {
        /// When each URL went on the list, in nanoseconds of the monotonic clock, and the number
        /// of that insertion.
        var added: [URL: (at: UInt64, insertion: Int)] = [:]
        /// The URLs in the order they went on, for evicting the oldest; stale positions (a URL
        /// removed or added again since) are skipped when met.
        var order: [(url: URL, insertion: Int)] = []
        var head = 0
        var insertions = 0
    }

    private let state = Locked(State())
    /// The list's size, read without the lock: every load checks the list, and it is almost
    /// always empty.
    private let size = Atomic(0)
    private let now: @Sendable () -> UInt64

    /// An empty list of at most `capacity` URLs, each blocking for `lifetime`.
    public convenience init(capacity: Int = 10_000, lifetime: Duration = .seconds(3600)) {
        self.init(capacity: capacity, lifetime: lifetime, now: { MonotonicClock.now() })
    }

    /// A list on a clock of the caller's, in nanoseconds (tests).
    package init(capacity: Int, lifetime: Duration, now: @escaping @Sendable () -> UInt64) {
        self.capacity = max(1, capacity)
        self.lifetime = lifetime
        self.now = now
    }

    /// Whether `url` is on the list and its entry has not aged out.
    public func contains(_ url: URL) -> Bool {
        guard size.load(ordering: .acquiring) > 0 else { return false }
        let time = now()
        let limit = MonotonicClock.nanoseconds(lifetime)
        return state.withLock { state in
            guard let added = state.added[url]?.at else { return false }
            guard time &- added < limit else {
                state.added[url] = nil
                size.store(state.added.count, ordering: .releasing)
                return false
            }
            return true
        }
    }

    /// Puts `url` on the list (again: its age starts over), making room by dropping the oldest.
    public func insert(_ url: URL) {
        let time = now()
        state.withLock { state in
            state.insertions += 1
            state.added[url] = (time, state.insertions)
            state.order.append((url, state.insertions))
            while state.added.count > capacity, state.head < state.order.count {
                let oldest = state.order[state.head]
                state.head += 1
                if state.added[oldest.url]?.insertion == oldest.insertion { state.added[oldest.url] = nil }
            }
            // The consumed front is dropped in bulk, so an insert never shifts the whole order.
            if state.head >= 1024, state.head * 2 >= state.order.count {
                state.order.removeFirst(state.head)
                state.head = 0
            }
            size.store(state.added.count, ordering: .releasing)
        }
    }

    /// Takes `url` off the list.
    public func remove(_ url: URL) {
        guard size.load(ordering: .acquiring) > 0 else { return }
        state.withLock { state in
            state.added[url] = nil
            size.store(state.added.count, ordering: .releasing)
        }
    }

    /// Empties the list.
    public func removeAll() {
        state.withLock { state in
            state = State()
            size.store(0, ordering: .releasing)
        }
    }

    /// How many URLs are on the list (aged entries included until they are next looked up).
    public var count: Int {
        size.load(ordering: .acquiring)
    }
}
