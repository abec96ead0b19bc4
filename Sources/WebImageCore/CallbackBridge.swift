/// Awaits a callback API that can be cancelled: `start` begins the work, hands `resume` to its
/// callback, and returns the action that cancels it (nil when there is nothing to cancel).
/// The first value wins: the callback's, or `cancelled()` when the calling task is cancelled,
/// in which case the cancel action runs too, whether the cancellation came before `start`
/// returned or after. The one bridge the loader, the manager and the pipeline share; inlinable
/// (with its state `@usableFromInline`), so that each caller's module specializes it.
@inlinable
package func withCancellableCallback<Value: Sendable>(
    cancelled: @autoclosure @escaping @Sendable () -> Value,
    _ start: (_ resume: @escaping @Sendable (Value) -> Void) -> (@Sendable () -> Void)?
) async -> Value {
    let box = Locked(CallbackBridgeState<Value>())
    return await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            box.withLock { $0.continuation = continuation }
            let cancel = start { value in box.withLock { $0.continuation.take() }?.resume(returning: value) }
            let cancelledMeanwhile = box.withLock { state in
                state.cancel = cancel
                return state.isCancelled
            }
            // The cancellation handler runs even for a task cancelled before this began, and the
            // two sides meet under the lock: exactly one of them runs the cancel action.
            if cancelledMeanwhile {
                cancel?()
                box.withLock { $0.continuation.take() }?.resume(returning: cancelled())
            }
        }
    } onCancel: {
        let (continuation, cancel) = box.withLock { state in
            state.isCancelled = true
            return (state.continuation.take(), state.cancel)
        }
        cancel?()
        continuation?.resume(returning: cancelled())
    }
}

/// What ``withCancellableCallback(cancelled:_:)`` keeps between its callback and the
/// cancellation handler.
@usableFromInline
package struct CallbackBridgeState<Value: Sendable> {
    @usableFromInline var continuation: CheckedContinuation<Value, Never>?
    @usableFromInline var cancel: (@Sendable () -> Void)?
    @usableFromInline var isCancelled = false

    @inlinable
    package init() {}
}
