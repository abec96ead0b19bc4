import Foundation
import FoundationNetworking

/// What a Swift developer on Linux reaches for first: FoundationNetworking's `URLSession`,
/// `concurrency` tasks each awaiting `data(from:)` in turn over the shared list.
enum URLSessionWorkload {
    static func run(urls: [URL], concurrency: Int) async throws -> (operations: Int, seconds: Double) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = concurrency
        let session = URLSession(configuration: configuration)
        let next = RawClientWorkload.NextIndex()
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while let index = next.take(below: urls.count) {
                        let (data, response) = try await session.data(from: urls[index])
                        guard (response as? HTTPURLResponse)?.statusCode == 200, !data.isEmpty else { throw URLError(.badServerResponse) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = clock.now - start
        session.invalidateAndCancel()
        return (urls.count, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
