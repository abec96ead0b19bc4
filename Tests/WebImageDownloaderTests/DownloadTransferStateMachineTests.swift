import Testing

@testable import WebImageDownloader
import WebImageTestSupport

/// Every path of a transfer's life, without a socket, a clock or a task.
@Suite("DownloadTransferStateMachine")
struct DownloadTransferStateMachineTests {
    private typealias Machine = DownloadTransferStateMachine
    private let failure = WebImageError(.badStatus(503))

    @Test("start, prepare, send, succeed; events of a past attempt or after the end change nothing")
    func success() {
        var machine = Machine()
        #expect(machine.start() == .prepare(attempt: 0))
        #expect(machine.start() == .none, "started once")
        #expect(machine.prepared(attempt: 0) == .send(attempt: 0))
        #expect(machine.attemptSucceeded(attempt: 1) == .none, "not the current attempt")
        #expect(machine.attemptSucceeded(attempt: 0) == .finish(.succeeded))
        #expect(machine.state == .finished)
        #expect(machine.attemptFailed(attempt: 0, error: failure, retryDelay: nil) == .none)
        #expect(machine.cancel() == .none)
    }

    @Test("a failure the policy retries waits, then prepares the next attempt; one it does not retry ends the transfer")
    func retries() {
        var machine = Machine()
        _ = machine.start()
        _ = machine.prepared(attempt: 0)
        #expect(
            machine.attemptFailed(attempt: 0, error: failure, retryDelay: .milliseconds(200)) == .scheduleRetry(after: .milliseconds(200)))
        #expect(machine.state == .waitingToRetry(nextAttempt: 1))
        #expect(machine.attemptSucceeded(attempt: 0) == .none, "the failed attempt cannot succeed later")
        #expect(machine.retryDue() == .prepare(attempt: 1))
        #expect(machine.retryDue() == .none, "due once")
        #expect(machine.attemptFailed(attempt: 1, error: failure, retryDelay: nil) == .finish(.failed(failure)))
    }

    @Test("a failure while preparing (the request modifier refused) is judged like one while sending")
    func failsWhilePreparing() {
        var machine = Machine()
        _ = machine.start()
        let refused = WebImageError(.rejected)
        #expect(machine.attemptFailed(attempt: 0, error: refused, retryDelay: nil) == .finish(.failed(refused)))
    }

    @Test("cancelling stops the running step, whose end finishes the transfer as cancelled, never retried")
    func cancelWhileRunning() {
        var preparing = Machine()
        _ = preparing.start()
        #expect(preparing.cancel() == .stopRunningWork)
        #expect(preparing.prepared(attempt: 0) == .finish(.cancelled), "a modifier that ignores cancellation sends nothing")

        var sending = Machine()
        _ = sending.start()
        _ = sending.prepared(attempt: 0)
        #expect(sending.cancel() == .stopRunningWork)
        #expect(sending.cancel() == .stopRunningWork, "until the step ends, each cancel stops it")
        #expect(sending.attemptFailed(attempt: 0, error: failure, retryDelay: .seconds(1)) == .finish(.cancelled))

        var waiting = Machine()
        _ = waiting.start()
        _ = waiting.prepared(attempt: 0)
        _ = waiting.attemptFailed(attempt: 0, error: failure, retryDelay: .seconds(1))
        #expect(waiting.cancel() == .stopRunningWork)
        #expect(waiting.retryDue() == .finish(.cancelled), "a back-off cut short ends the transfer")
    }

    @Test("a transfer cancelled in the queue finishes as cancelled if a slot reaches it, which gives the slot back")
    func cancelWhileQueued() {
        var machine = Machine()
        #expect(machine.cancel() == .none)
        #expect(machine.isCancelled && machine.state == .queued)
        #expect(machine.start() == .finish(.cancelled))
        #expect(machine.state == .finished)
    }
}
