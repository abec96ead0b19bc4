import Dispatch
import Foundation
import Testing
@testable import WebImageDownloader
import WebImageTestSupport

/// The downloader's table of transfers under callers that join and leave at once, on two
/// threads, without a network: what the callers of one URL share must be atomic.
@Suite("Download scheduler")
struct DownloadSchedulerTests {
    /// What one round saw: whether the leaving caller was told to cancel the transfer, and
    /// whether the joining caller got that same transfer.
    private final class Round: @unchecked Sendable {
        // Written by one thread each inside concurrentPerform, read after it returns.
        var leftLast = false
        var joined: (transfer: DownloadTransfer, id: Int)?
    }

    /// Found by reading `leave` (the flaky `lastURLWins`: a load set again just after
    /// its URL's last caller left): the caller was removed under the transfer's lock and the
    /// transfer forgotten under the scheduler's, and a join between the two attached to the
    /// transfer about to be cancelled, failing with `.cancelled` a load nobody cancelled.
    @Test("a caller joining as the last one leaves gets a live transfer, never the one being cancelled")
    func joinRacingTheLastLeave() {
        let scheduler = DownloadScheduler(slots: 0, order: .fifo)
        let key = DownloadTransfer.Key(url: URL(string: "http://images.test/a.png")!, options: LoadRequestOptions())
        let subscriber = DownloadTransfer.Subscriber(priority: .normal, wantsPartial: false) { _ in }
        var violations = 0
        for _ in 0..<50_000 {
            let (first, firstID) = scheduler.join(key, options: LoadRequestOptions(), subscriber: subscriber)
            let round = Round()
            DispatchQueue.concurrentPerform(iterations: 2) { thread in
                if thread == 0 {
                    round.leftLast = scheduler.leave(firstID, from: first)
                } else {
                    round.joined = scheduler.join(key, options: LoadRequestOptions(), subscriber: subscriber)
                }
            }
            guard let joined = round.joined else { continue }
            if round.leftLast && joined.transfer === first { violations += 1 }
            _ = scheduler.leave(joined.id, from: joined.transfer)
        }
        #expect(violations == 0, "a join attached to a transfer its last caller had left \(violations) times")
    }
}
