import Dispatch

/// Runs CPU-heavy synchronous test work on a GCD thread and awaits its result, so that it never
/// holds one of the few threads of Swift's cooperative pool that every other running test's tasks
/// and timeouts need. The work must not record expectations; check what it returns.
package func offCooperativePool<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Swift.Result { try work() }) }
    }
}
