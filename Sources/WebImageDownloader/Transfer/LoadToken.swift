/// One caller's hold on one of the downloader's shared transfers, the callback side that
/// ``ImageDownloader/loadData(_:options:events:)`` is built on. Cancelling ends that caller's
/// events only; the shared work stops when every caller sharing it has cancelled.
package final class LoadToken: ImageOperation {
    private let onCancel: Locked<(@Sendable () -> Void)?>
    private let onPriorityChange: @Sendable (LoadRequestOptions.Priority) -> Void

    /// A token that runs `onCancel` once, on the first ``cancel()``, and passes priority changes
    /// to `onPriorityChange` (the scheduler's move within its queue).
    package init(onCancel: @escaping @Sendable () -> Void, onPriorityChange: @escaping @Sendable (LoadRequestOptions.Priority) -> Void) {
        self.onCancel = Locked(onCancel)
        self.onPriorityChange = onPriorityChange
    }

    /// Moves the load within its loader's queue, if it is still waiting there.
    package func setPriority(_ priority: LoadRequestOptions.Priority) {
        guard !isCancelled else { return }
        onPriorityChange(priority)
    }

    /// Stops this caller's events.
    package func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    /// Whether the token was cancelled.
    package var isCancelled: Bool {
        onCancel.withLock { $0 == nil }
    }
}
