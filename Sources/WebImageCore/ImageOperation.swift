/// What every cancellable handle the library returns can do (SDWebImage's `SDWebImageOperation`):
/// a manager's `LoadOperation`, a loader's `LoadToken` and a prefetcher's `PrefetchToken`. Each keeps its own type for what only it does (a token's
/// priority, a prefetch's counts); code that only needs to stop work holds `any ImageOperation`.
public protocol ImageOperation: AnyObject, Sendable {
    /// Stops the work for this handle's caller; its callbacks are not called afterwards.
    /// Calling it again does nothing.
    func cancel()
    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { get }
}
