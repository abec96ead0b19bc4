/// One caller's hold on one of the downloader's shared transfers, the callback side that
/// ``ImageDownloader/loadData(_:options:events:)`` is built on. Cancelling ends that caller's
/// events only; the shared work stops when every caller sharing it has cancelled.
package final class LoadToken: ImageOperation {
    private let onCancel: Locked<(@Sendable () -> Void)?>
    private let onPriorityChange: (@Sendable (LoadRequestOptions.Priority) -> Void)?

    /// A token that runs `onCancel` once, on the first ``cancel()``, and passes priority changes
    /// to `onPriorityChange` (for loaders with a queue).
    package init(
        onCancel: @escaping @Sendable () -> Void,
        onPriorityChange: (@Sendable (LoadRequestOptions.Priority) -> Void)? = nil
    ) {
        self.onCancel = Locked(onCancel)
        self.onPriorityChange = onPriorityChange
    }

    /// Moves the load within its loader's queue, if it is still waiting there.
    package func setPriority(_ priority: LoadRequestOptions.Priority) {
        guard !isCancelled else { return }
        onPriorityChange?(priority)
    }

    /// A token for a load that already ended.
    package static func finished() -> LoadToken {
        let token = LoadToken {}
        token.cancel()
        return token
    }

    /// Stops this caller's events.
    package func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    /// Whether the token was cancelled (or its load had ended when it was made).
    package var isCancelled: Bool {
        onCancel.withLock { $0 == nil }
    }
}
