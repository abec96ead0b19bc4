import Dispatch
import Testing
import WebImageTesting

@testable import WebImageCore
import WebImageTestSupport

@Suite("WorkPool")
struct WorkPoolTests {
    @Test("waiting jobs start by priority, then in arrival order; never more than the width at once")
    func priorityOrder() async throws {
        let pool = WorkPool(width: 1)
        let blocker = DispatchSemaphore(value: 0)
        let started = EventLog<String>()
        let order = Locked<[String]>([])
        let running = Locked((now: 0, most: 0))
        func job(_ name: String, _ priority: WorkPool.Priority, wait: Bool = false) -> Task<Void, any Error> {
            Task {
                try await pool.run(priority: priority) {
                    running.withLock {
                        $0.now += 1
                        $0.most = max($0.most, $0.now)
                    }
                    started.record(name)
                    if wait { blocker.wait() }
                    order.withLock { $0.append(name) }
                    running.withLock { $0.now -= 1 }
                }
            }
        }
        let first = job("first", .low, wait: true)
        try await started.waitFor("the first job to hold the only slot") { $0 == "first" }
        // Queued one at a time, each behind the previous in arrival order.
        var queued: [Task<Void, any Error>] = []
        for (name, priority) in [("low-1", WorkPool.Priority.low), ("normal", .normal), ("low-2", .low), ("high", .high)] {
            queued.append(job(name, priority))
            try await pool.waitUntilQueued(queued.count)
        }
        blocker.signal()
        try await first.value
        for task in queued { try await task.value }
        #expect(order.withLock { $0 } == ["first", "high", "normal", "low-1", "low-2"])
        #expect(running.withLock { $0.most } == 1)
    }

    @Test("a caller cancelled while its job waits gets .cancelled and the job never runs; one cancelled before asking never queues")
    func cancelledWhileWaiting() async throws {
        let pool = WorkPool(width: 1)
        let blocker = DispatchSemaphore(value: 0)
        let started = EventLog<String>()
        let ran = Locked<[String]>([])
        let holder = Task {
            try await pool.run { () throws(WebImageError) in
                started.record("holder")
                blocker.wait()
            }
        }
        try await started.waitFor("the holder to take the only slot") { $0 == "holder" }
        let waiting = Task {
            try await pool.run { () throws(WebImageError) in ran.withLock { $0.append("waiting") } }
        }
        try await pool.waitUntilQueued(1)
        waiting.cancel()
        await #expect(throws: WebImageError(.cancelled)) { try await waiting.value }
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await pool.run { () throws(WebImageError) in ran.withLock { $0.append("early") } }
        }
        await #expect(throws: WebImageError(.cancelled)) { try await early.value }
        #expect(pool.waitingCount == 1, "the cancelled waiter's job, which will not run its work; the early one never queued")
        blocker.signal()
        try await holder.value
        // Everything queued before this job has started (one slot, arrival order).
        try await pool.run(priority: .low) { () throws(WebImageError) in }
        #expect(ran.withLock { $0 }.isEmpty)
    }
}
