import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import WebImageTesting

/// What a test client saw of one response.
struct Fetched {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]
    /// How many separate body parts arrived.
    var parts: Int
}

/// A real HTTP client for the origin server's own tests.
struct HTTPFetch {
    let client: HTTPClient

    init(followRedirects: Bool = false, decompress: Bool = false, readTimeout: TimeAmount? = nil) {
        var configuration = HTTPClient.Configuration()
        configuration.timeout.read = readTimeout
        configuration.redirectConfiguration = followRedirects ? .follow(max: 5, allowCycles: false) : .disallow
        configuration.decompression = decompress ? .enabled(limit: .none) : .disabled
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Fetches `url`, reading the body part by part; `received` sees each part as it comes.
    func get(
        _ url: String,
        method: HTTPMethod = .GET,
        headers: [(String, String)] = [],
        timeout: TimeAmount = .seconds(10),
        received: (ByteBuffer) -> Void = { _ in }
    ) async throws -> Fetched {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(contentsOf: headers)
        let response = try await client.execute(request, timeout: timeout)
        var fetched = Fetched(status: Int(response.status.code), headers: response.headers, body: [], parts: 0)
        for try await part in response.body {
            received(part)
            fetched.body.append(contentsOf: part.readableBytesView)
            fetched.parts += 1
        }
        return fetched
    }

    func shutdown() async throws {
        try await client.shutdown()
    }
}

/// Runs `body` with a fresh origin server and client, and stops both afterwards.
func withOrigin<T>(
    followRedirects: Bool = false,
    decompress: Bool = false,
    readTimeout: TimeAmount? = nil,
    _ body: (OriginServer, HTTPFetch) async throws -> T
) async throws -> T {
    let origin = try await OriginServer.start()
    let fetch = HTTPFetch(followRedirects: followRedirects, decompress: decompress, readTimeout: readTimeout)
    do {
        let result = try await body(origin, fetch)
        try await fetch.shutdown()
        try await origin.shutdown()
        return result
    } catch {
        try? await fetch.shutdown()
        try? await origin.shutdown()
        throw error
    }
}
