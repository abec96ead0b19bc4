import WebImage
import WebImageCore

/// Concurrent identical requests share one piece of work: the first starts it, the others wait
/// for the same result, and the entry is gone once it finishes (the result cache keeps it after
/// that). Waiting is counted: a waiter whose task is cancelled (its client went away, or its
/// deadline passed) stops waiting at once with 499, and when the last waiter has gone the work
/// itself is cancelled, so that nobody's abandoned request goes on holding a download or a slot.
///
/// The bookkeeping is the coalescing engine the manager and the downloader share
/// (`CoalescingTable` for the works by key, `Subscribers` for each one's waiters), all of it
/// under one lock.
final class InFlight<Value: Sendable>: Sendable {
    private typealias Waiters = Subscribers<Result<Value, ProxyError>, Int>

    /// One running piece of work and who waits for it.
    private final class Work: @unchecked Sendable {
        // @unchecked: both fields are read and written inside `InFlight.works`' lock only.
        var task: Task<Void, Never>?
        var waiters = Waiters()
    }

    private let works = Locked(CoalescingTable<String, Work>())

    /// How many pieces of work run now.
    var count: Int { works.withLock { $0.count } }
    /// How many callers wait for them, together.
    var waiterCount: Int { works.withLock { $0.all.reduce(0) { $0 + $1.waiters.count } } }

    /// The result of the work running for `key`, or of `work` started now.
    /// - Throws: the work's error, or 499 when this caller's task is cancelled first.
    func run(_ key: String, _ work: @escaping @Sendable () async throws(ProxyError) -> Value) async throws(ProxyError) -> Value {
        // Which work this caller waits for and its id there, for the cancellation handler: set
        // and read inside `works`' lock, so a cancellation either finds the caller or comes
        // before it joins (which then sees the task cancelled).
        let joined = Locked<(work: Work, id: Int)?>(nil)
        let result: Result<Value, ProxyError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                join(key, joined: joined, continuation: continuation, work)
            }
        } onCancel: {
            leave(key, joined: joined)
        }
        return try result.get()
    }

    private func join(
        _ key: String, joined: Locked<(work: Work, id: Int)?>, continuation: CheckedContinuation<Result<Value, ProxyError>, Never>,
        _ body: @escaping @Sendable () async throws(ProxyError) -> Value
    ) {
        let cancelled = works.withLock { table in
            if Task.isCancelled { return true }
            let (work, isNew) = table.join(key) { Work() }
            let waiter = Waiters.Subscriber(priority: 0, wantsPartial: false) { continuation.resume(returning: $0) }
            joined.withLock { $0 = (work, work.waiters.add(waiter).id) }
            if isNew {
                // Started under the lock, so that nothing finishes before the entry exists; its
                // first step is outside it.
                work.task = Task { [self] in
                    let result: Result<Value, ProxyError>
                    do throws(ProxyError) { result = .success(try await body()) } catch { result = .failure(error) }
                    finish(key, work, result)
                }
            }
            return false
        }
        if cancelled { continuation.resume(returning: .failure(Self.gone)) }
    }

    /// A waiter stops waiting; the last one's leaving cancels the work.
    private func leave(_ key: String, joined: Locked<(work: Work, id: Int)?>) {
        let (waiter, abandoned) = works.withLock { table -> (Waiters.Subscriber?, Task<Void, Never>?) in
            guard let (work, id) = joined.withLock({ $0 }) else { return (nil, nil) }
            let (waiter, wasLast) = work.waiters.take(id)
            guard wasLast else { return (waiter, nil) }
            table.remove(work, for: key)
            return (waiter, work.task)
        }
        waiter?.deliver(.failure(Self.gone))
        abandoned?.cancel()
    }

    private func finish(_ key: String, _ work: Work, _ result: Result<Value, ProxyError>) {
        let waiters = works.withLock { table in
            table.remove(work, for: key)
            return work.waiters.finish()
        }
        for waiter in waiters { waiter.deliver(result) }
    }

    private static var gone: ProxyError { ProxyError(status: 499, "the client went away") }
}
