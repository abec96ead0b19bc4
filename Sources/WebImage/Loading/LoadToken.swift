/// One caller's hold on a load. Cancelling ends that caller's events only; the shared work stops
/// when every caller sharing it has cancelled.
public final class LoadToken: Sendable {
    private let onCancel: Locked<(@Sendable () -> Void)?>

    /// A token that runs `onCancel` once, on the first ``cancel()``.
    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Locked(onCancel)
    }

    /// A token for a load that already ended.
    public static func finished() -> LoadToken {
        let token = LoadToken {}
        token.cancel()
        return token
    }

    /// Stops this caller's events.
    public func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    /// Whether the token was cancelled (or its load had ended when it was made).
    public var isCancelled: Bool {
        onCancel.withLock { $0 == nil }
    }
}
