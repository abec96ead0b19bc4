import Foundation

/// The loads a target has under way, one per operation key (SDWebImage's per-view operation
/// table), and the URL each is for. A target keeps one in a stored property.
///
/// `@unchecked Sendable` is sound: `entries` is only touched while `lock` is held. The lock is
/// recursive so that a target may start a new load from inside its own `setImage(_:...)`, which
/// runs under the lock: a result is checked and shown in one step, so that a newer load's
/// result can never be overwritten by an older one's.
public final class ImageTargetState: @unchecked Sendable {
    struct Entry {
        var url: URL?
        var operation: LoadOperation?
        var generation = 0
    }

    private let lock = NSRecursiveLock()
    private var entries: [String: Entry] = [:]

    /// A state with no loads.
    public init() {}

    func withLock<Result>(_ body: (inout [String: Entry]) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&entries)
    }

    /// Starts a new load under `key`: cancels the one there, records `url`, and returns the
    /// generation that the new load's results must still match to be shown.
    func begin(_ key: String, url: URL?) -> Int {
        let (previous, generation) = withLock { entries -> (LoadOperation?, Int) in
            var entry = entries[key] ?? Entry()
            let previous = entry.operation
            entry.generation += 1
            entry.url = url
            entry.operation = nil
            entries[key] = entry
            return (previous, entry.generation)
        }
        previous?.cancel()
        return generation
    }

    /// Keeps the operation of the load `generation`, unless a newer load replaced it.
    func attach(_ operation: LoadOperation?, to key: String, generation: Int) {
        let stale = withLock { entries -> Bool in
            guard entries[key]?.generation == generation else { return true }
            if operation?.isFinished == false { entries[key]?.operation = operation }
            return false
        }
        if stale { operation?.cancel() }
    }

    /// Runs `body` under the lock if load `generation` is still the current one under `key`;
    /// `finish` also forgets its operation.
    func ifCurrent(_ key: String, generation: Int, finish: Bool, _ body: () -> Void) {
        withLock { entries in
            guard entries[key]?.generation == generation else { return }
            if finish { entries[key]?.operation = nil }
            body()
        }
    }

    /// Cancels the load under `key` (the URL stays recorded).
    func cancel(_ key: String) {
        let operation = withLock { entries -> LoadOperation? in
            entries[key]?.generation += 1
            defer { entries[key]?.operation = nil }
            return entries[key]?.operation
        }
        operation?.cancel()
    }

    func url(_ key: String) -> URL? {
        withLock { $0[key]?.url }
    }
}
