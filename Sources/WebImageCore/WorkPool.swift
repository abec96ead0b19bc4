import Dispatch
import Foundation

/// The library's one pool for blocking work (decoding, transforming, cache file I/O): at most
/// `width` jobs run at once on GCD threads, the rest wait. GCD because the work blocks its thread
/// (a decode, a read), which a task on Swift's cooperative pool must never do; the bound is ours. Swift's cooperative pool is never blocked by a decode, and a burst
/// of misses never starts more decodes than there are cores. Waiting jobs start by priority,
/// then in arrival order, so the decode of an image someone is looking at does not wait behind
/// a prefetch batch's.
@usableFromInline
package final class WorkPool: Sendable {
    /// The order in which waiting jobs start: high first.
    @usableFromInline
    package enum Priority: Int, Sendable, CaseIterable {
        case low
        case normal
        case high
    }

    /// Jobs of one priority in arrival order from `head`; the consumed front is dropped in bulk,
    /// so taking a job never shifts the whole queue.
    private struct Waiting {
        var jobs: [(@Sendable () -> Void)?] = []
        var head = 0

        mutating func take() -> (@Sendable () -> Void)? {
            guard head < jobs.count else { return nil }
            defer {
                jobs[head] = nil
                head += 1
                if head >= 1024 && head * 2 >= jobs.count {
                    jobs.removeFirst(head)
                    head = 0
                }
            }
            return jobs[head]
        }
    }

    private struct State {
        var running = 0
        /// One queue per priority, indexed by its raw value.
        var waiting = [Waiting](repeating: Waiting(), count: Priority.allCases.count)

        mutating func take() -> (@Sendable () -> Void)? {
            for priority in Priority.allCases.reversed() {
                if let job = waiting[priority.rawValue].take() { return job }
            }
            return nil
        }
    }

    package let width: Int
    private let state = Locked(State())
    private let queue = DispatchQueue(label: "webimage.work", qos: .userInitiated, attributes: .concurrent)

    /// The pool shared by managers: one job per core.
    package static let shared = WorkPool(width: ProcessInfo.processInfo.activeProcessorCount)

    package init(width: Int) {
        self.width = max(1, width)
    }

    /// Runs `work` in the pool and returns its result; when the pool is busy it waits behind the
    /// jobs of its priority and higher. A caller cancelled while its job waits gets
    /// `WebImageError.Code.cancelled` at once, and the job, when its turn comes, ends without
    /// running `work`: a queue of abandoned decodes holds no slot. (A job that has started runs
    /// to its end: a decode has no point to stop at.) Inlinable, so that the generic part is
    /// specialized in the caller's module (the manager's) and only the non-generic
    /// ``submit(priority:_:)`` crosses.
    @inlinable
    package func run<Output: Sendable>(
        priority: Priority = .normal, _ work: @escaping @Sendable () throws(WebImageError) -> Output
    ) async throws(WebImageError) -> Output {
        // A caller cancelled before asking never queues a job.
        if Task.isCancelled { throw WebImageError(.cancelled) }
        let abandoned = Locked(false)
        let result = await withCancellableCallback(cancelled: Result<Output, WebImageError>.failure(WebImageError(.cancelled))) { resume in
            submit(priority: priority) {
                guard !abandoned.withLock({ $0 }) else { return }
                resume(Result { () throws(WebImageError) in try work() })
            }
            return { abandoned.withLock { $0 = true } }
        }
        return try result.get()
    }

    /// Starts `job` now when a slot is free, else queues it by priority.
    @usableFromInline
    package func submit(priority: Priority, _ job: @escaping @Sendable () -> Void) {
        let startNow = state.withLock { state in
            guard state.running < width else {
                state.waiting[priority.rawValue].jobs.append(job)
                return false
            }
            state.running += 1
            return true
        }
        if startNow { dispatch(job) }
    }

    /// How many jobs wait for a slot.
    package var waitingCount: Int {
        state.withLock { state in state.waiting.reduce(0) { $0 + $1.jobs.count - $1.head } }
    }

    /// ``run(priority:_:)`` for work that cannot fail.
    package func runUnlessCancelled<Output: Sendable>(priority: Priority = .normal, _ work: @escaping @Sendable () -> Output?) async
        -> Output?
    {
        (try? await run(priority: priority) { () throws(WebImageError) in work() }) ?? nil
    }

    private func dispatch(_ job: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            job()
            let next = state.withLock { state in
                guard let job = state.take() else {
                    state.running -= 1
                    return nil as (@Sendable () -> Void)?
                }
                return job
            }
            if let next { dispatch(next) }
        }
    }
}
