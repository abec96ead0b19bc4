/// A running asynchronous cache query; cancelling it means its completion is never called.
public final class ImageCacheQuery: ImageOperation {
    private let cancelled = Locked(false)

    init() {}

    /// Stops the query; its completion will not run.
    public func cancel() {
        cancelled.withLock { $0 = true }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool {
        cancelled.withLock { $0 }
    }
}
