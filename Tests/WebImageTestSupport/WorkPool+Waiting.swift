package import WebImageCore

extension WorkPool {
    /// Waits for the queue to hold `count` jobs.
    package func waitUntilQueued(_ count: Int) async throws {
        try await waitUntil("\(count) queued jobs") { waitingCount >= count }
    }
}
