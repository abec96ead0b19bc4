package import WebImageCore

extension WorkPool {
    /// Waits for the queue to hold `count` jobs, yielding between looks (no sleep).
    package func waitUntilQueued(_ count: Int) async throws {
        while waitingCount < count {
            try Task.checkCancellation()
            await Task.yield()
        }
    }
}
