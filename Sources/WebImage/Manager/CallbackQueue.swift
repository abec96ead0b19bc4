public import Dispatch

/// Where a load's callbacks run.
public enum CallbackQueue: Sendable {
    /// On whichever thread produced the result, at once: a memory hit calls back before
    /// `loadImage` returns. The default, and the fastest; Linux has no main queue to default to.
    case inline
    /// Asynchronously on a dispatch queue (a serial queue keeps callbacks in order).
    case dispatch(DispatchQueue)
    /// In a task that prefers this executor.
    case executor(any TaskExecutor)

    func run(_ body: @escaping @Sendable () -> Void) {
        switch self {
        case .inline: body()
        case .dispatch(let queue): queue.async(execute: body)
        case .executor(let executor): Task(executorPreference: executor) { body() }
        }
    }
}
