/// Suspends until the calling task is cancelled (at once if it already is), without polling: for
/// test loaders and tasks that stand for work that never ends by itself.
package func untilCancelled() async {
    let (stream, continuation) = AsyncStream<Never>.makeStream()
    await withTaskCancellationHandler {
        for await _ in stream {}
    } onCancel: {
        continuation.finish()
    }
}
