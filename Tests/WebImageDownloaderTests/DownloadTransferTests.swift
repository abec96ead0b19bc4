import Foundation
import Testing
@testable import WebImageDownloader
import WebImageTestSupport

/// A transfer's life apart from any socket: the task its work runs in, and what cancelling does
/// in the queue, while it runs and after it ended.
@Suite("Download transfer")
struct DownloadTransferTests {
    private func transfer() -> DownloadTransfer {
        DownloadTransfer(
            key: DownloadTransfer.Key(url: URL(string: "http://127.0.0.1/a.png")!, options: LoadRequestOptions()),
            options: LoadRequestOptions(), sequence: 1)
    }

    @Test("a transfer cancelled while it waits starts no work when a slot reaches it; the downloader ends it as cancelled")
    func cancelledWhileWaiting() {
        let waiting = transfer()
        waiting.cancel()
        let ran = Locked(false)
        #expect(!waiting.launch { ran.withLock { $0 = true } })
        #expect(!ran.withLock { $0 })
    }

    @Test("cancelling a running transfer cancels its task, which ends whichever step it is in")
    func cancelledWhileRunning() async throws {
        let running = transfer()
        let (ended, ending) = AsyncStream<Bool>.makeStream()
        let (started, starting) = AsyncStream<Void>.makeStream()
        #expect(
            running.launch {
                starting.yield()
                await untilCancelled()
                ending.yield(Task.isCancelled)
            })
        #expect(!running.launch {}, "a transfer is launched once")
        var startedEvents = started.makeAsyncIterator()
        _ = await startedEvents.next()
        running.cancel()
        let task = try #require(
            running.state.withLock { state -> Task<Void, Never>? in
                if case .running(let task) = state.phase { task } else { nil }
            })
        // Waited for only once cancelled: a build that failed to cancel fails here, not hangs.
        try #require(task.isCancelled, "the transfer's task is cancelled")
        var endings = ended.makeAsyncIterator()
        #expect(await endings.next() == true, "the work saw the cancellation and ended")
    }

    @Test("after the callers have their result, cancelling changes nothing")
    func cancelledAfterFinishing() {
        let finished = transfer()
        let delivered = Locked<[TransferEvent]>([])
        _ = finished.state.withLock { state in
            state.subscribers.add(.init(priority: .normal, wantsPartial: false) { event in delivered.withLock { $0.append(event) } })
        }
        finished.finish(.failure(WebImageError(.notAnImage)))
        finished.cancel()
        #expect(finished.state.withLock { if case .finished = $0.phase { true } else { false } })
        #expect(delivered.withLock { $0.count } == 1)
    }
}
