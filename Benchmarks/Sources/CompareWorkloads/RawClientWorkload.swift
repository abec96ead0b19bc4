import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization

/// AsyncHTTPClient by itself, as its documentation shows it: the baseline the downloader's own
/// work sits on. Sixteen worker tasks take the next URL of the list until it is empty, each
/// reading the whole body; one client with a pool of `concurrency` connections.
enum RawClientWorkload {
    static func run(urls: [URL], concurrency: Int) async throws -> (operations: Int, seconds: Double) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let seconds = try await forEachIndex(below: urls.count, concurrency: concurrency) { index in
            let response = try await client.execute(HTTPClientRequest(url: urls[index].absoluteString), timeout: .seconds(15))
            let body = try await response.body.collect(upTo: 50 * 1024 * 1024)
            guard response.status == .ok, body.readableBytes > 0 else { throw HTTPClientError.invalidURL }
        }
        try await client.shutdown()
        return (urls.count, seconds)
    }

    /// Runs `body` for 0, 1, 2, ... `count - 1` in `concurrency` worker tasks, each taking the
    /// next index when done with its last; returns the seconds it took.
    static func forEachIndex(below count: Int, concurrency: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws
        -> Double
    {
        let next = NextIndex()
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while let index = next.take(below: count) { try await body(index) }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Hands out 0, 1, 2, ... to the workers.
    private final class NextIndex: Sendable {
        private let counter = Mutex(0)

        func take(below count: Int) -> Int? {
            counter.withLock { value in
                guard value < count else { return nil }
                defer { value += 1 }
                return value
            }
        }
    }
}
