/// A state a test waited for did not come in time.
package struct WaitTimeout: Error, CustomStringConvertible {
    package let description: String
}

/// Waits until `condition` holds, yielding between looks (no sleep), for state that has no event
/// to wait on (a queue's length, a count of waiters).
/// - Throws: ``WaitTimeout`` naming `what` when it does not hold within `timeout`;
///   `CancellationError` when the task is cancelled.
package func waitUntil(_ what: String, timeout: Duration = .seconds(20), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        try Task.checkCancellation()
        guard ContinuousClock.now < deadline else { throw WaitTimeout(description: "no \(what) within \(timeout)") }
        await Task.yield()
    }
}
