import Dispatch
import Foundation

/// A bounded pool for CPU work (decoding, transforming): at most `width` jobs run at once on
/// GCD threads, the rest wait in order. Swift's cooperative pool is never blocked by a decode,
/// and a burst of misses never starts more decodes than there are cores.
package final class WorkPool: Sendable {
    private struct State {
        var running = 0
        /// Jobs in arrival order from `head`; the consumed front is dropped in bulk, so taking a
        /// job never shifts the whole queue.
        var waiting: [(@Sendable () -> Void)?] = []
        var head = 0

        mutating func take() -> (@Sendable () -> Void)? {
            guard head < waiting.count else { return nil }
            defer {
                waiting[head] = nil
                head += 1
                if head >= 1024 && head * 2 >= waiting.count {
                    waiting.removeFirst(head)
                    head = 0
                }
            }
            return waiting[head]
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

    /// Runs `work` in the pool and returns its result. A task cancelled while its job waits
    /// skips the work and gets ``WebImageError/Code/cancelled``.
    package func run<Output: Sendable>(_ work: @escaping @Sendable () throws(WebImageError) -> Output) async throws(WebImageError) -> Output
    {
        let result: Result<Output, WebImageError> = await withCheckedContinuation { continuation in
            let job: @Sendable () -> Void = {
                continuation.resume(returning: Result { () throws(WebImageError) in try work() })
            }
            let startNow = state.withLock { state in
                guard state.running < width else {
                    state.waiting.append(job)
                    return false
                }
                state.running += 1
                return true
            }
            if startNow { dispatch(job) }
        }
        return try result.get()
    }

    /// ``run(_:)`` for work that cannot fail; nil when the task was cancelled while waiting.
    package func runUnlessCancelled<Output: Sendable>(_ work: @escaping @Sendable () -> Output?) async -> Output? {
        (try? await run { () throws(WebImageError) in work() }) ?? nil
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
