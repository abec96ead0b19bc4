import Foundation
package import WebImageCore
package import WebImageTesting
package import WebImageDownloader

/// Collects what callers of a downloader receive, and lets a test wait for the n-th result.
package final class Outcomes: Sendable {
    package init() {}

    package let results = EventLog<(index: Int, result: Result<LoadedData, WebImageError>)>()
    private let count = Locked(0)
    package let progress = Locked<[(Int64, Int64?)]>([])
    package let partials = Locked<[Int]>([])

    package func handler() -> @Sendable (TransferEvent) -> Void {
        { event in
            switch event {
            case .finished(let result):
                let index = self.count.withLock { count in
                    count += 1
                    return count
                }
                self.results.record((index, result))
            case .update(.progress(let received, let expected)):
                self.progress.withLock { $0.append((received, expected)) }
            case .update(.partialData(let data)):
                self.partials.withLock { $0.append(data.data.count) }
            }
        }
    }

    /// Waits until `n` callers have their result.
    package func waitForResults(_ n: Int, timeout: Duration = .seconds(20)) async throws {
        try await results.waitFor(timeout: timeout, "\(n) results") { $0.index == n }
    }

    package var all: [Result<LoadedData, WebImageError>] { results.events.map(\.result) }
}
