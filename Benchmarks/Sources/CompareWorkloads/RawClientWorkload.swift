import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// AsyncHTTPClient by itself, as its documentation shows it: the baseline the downloader's own
/// work sits on. Sixteen worker tasks take the next URL of the list until it is empty, each
/// reading the whole body; one client with a pool of `concurrency` connections.
enum RawClientWorkload {
    ///
    /// With `downloaderSettings`, the client is configured as the downloader configures its own:
    /// a read timeout and a connect timeout, decompression on (with a cap), redirects and the
    /// pool's connection retries off, no tracer. What those settings cost the client is the
    /// floor under the downloader's own layer.
    static func run(urls: [URL], concurrency: Int, downloaderSettings: Bool = false) async throws -> (operations: Int, seconds: Double) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        if downloaderSettings {
            configuration.redirectConfiguration = .disallow
            configuration.timeout.read = .seconds(15)
            configuration.timeout.connect = .seconds(10)
            configuration.connectionPool.retryConnectionEstablishment = false
            configuration.decompression = .enabled(limit: .size(50 * 1024 * 1024))
            configuration.tracing.tracer = nil
        }
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let seconds = try await forEachIndex(below: urls.count, concurrency: concurrency) { index in
            let response = try await client.execute(HTTPClientRequest(url: urls[index].absoluteString), timeout: .seconds(15))
            let body = try await response.body.collect(upTo: 50 * 1024 * 1024)
            guard response.status == .ok, body.readableBytes > 0 else { throw HTTPClientError.invalidURL }
        }
        try await client.shutdown()
        return (urls.count, seconds)
    }

    /// The same through the client's delegate API, as the downloader uses it: a delegate that
    /// collects the body, the request's event loop left to the client. The floor under the
    /// downloader's own layer: the delegate path costs the client more than `execute`'s async
    /// response does (the delegate runs on the task's event loop, which is often not the
    /// connection's).
    static func runWithDelegate(urls: [URL], concurrency: Int) async throws -> (operations: Int, seconds: Double) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let seconds = try await forEachIndex(below: urls.count, concurrency: concurrency) { index in
            let request = try HTTPClient.Request(url: urls[index].absoluteString)
            let body = try await client.execute(request: request, delegate: Collector(), deadline: .now() + .seconds(15)).get()
            guard body.readableBytes > 0 else { throw HTTPClientError.invalidURL }
        }
        try await client.shutdown()
        return (urls.count, seconds)
    }

    /// Gathers a response's body; refuses a status other than 200.
    private final class Collector: HTTPClientResponseDelegate {
        private var body = ByteBuffer()
        private var status: HTTPResponseStatus = .ok

        func didReceiveHead(task: HTTPClient.Task<ByteBuffer>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            status = head.status
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didReceiveBodyPart(task: HTTPClient.Task<ByteBuffer>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            var buffer = buffer
            body.writeBuffer(&buffer)
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didFinishRequest(task: HTTPClient.Task<ByteBuffer>) throws -> ByteBuffer {
            guard status == .ok else { throw HTTPClientError.invalidURL }
            return body
        }
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
