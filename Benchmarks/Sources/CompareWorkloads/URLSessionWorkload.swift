import Foundation
import FoundationNetworking

/// What a Swift developer on Linux reaches for first: FoundationNetworking's `URLSession`,
/// `concurrency` tasks each awaiting `data(from:)` in turn over the shared list.
enum URLSessionWorkload {
    static func run(urls: [URL], concurrency: Int) async throws -> (operations: Int, seconds: Double) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = concurrency
        let session = URLSession(configuration: configuration)
        let seconds = try await RawClientWorkload.forEachIndex(below: urls.count, concurrency: concurrency) { index in
            let (data, response) = try await session.data(from: urls[index])
            guard (response as? HTTPURLResponse)?.statusCode == 200, !data.isEmpty else { throw URLError(.badServerResponse) }
        }
        session.invalidateAndCancel()
        return (urls.count, seconds)
    }
}
