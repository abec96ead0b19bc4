import Foundation
import Testing
import WebImageCore

@testable import WebImageServer
import WebImageTestSupport

/// The proxy's sharing of identical work, without a server or a socket: the coalescing engine's
/// table and waiters under `InFlight`'s lock (issue 39: one engine at every stage).
@Suite("InFlight: identical requests share one work")
struct InFlightTests {
    /// A gate a work waits at until the test opens it; a cancelled waiter stops waiting.
    final class Gate: Sendable {
        private let stream: AsyncStream<Void>
        private let continuation: AsyncStream<Void>.Continuation

        init() {
            (stream, continuation) = AsyncStream.makeStream()
        }

        func open() { continuation.finish() }

        /// Returns when opened, or when the calling task is cancelled.
        func wait() async {
            for await _ in stream {}
        }
    }

    /// What the works did, as events a test waits for.
    final class Log: Sendable {
        private let stream: AsyncStream<String>
        private let continuation: AsyncStream<String>.Continuation
        let starts = Locked(0)

        init() {
            (stream, continuation) = AsyncStream.makeStream()
        }

        func record(_ event: String) { continuation.yield(event) }

        func next() async -> String? {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
    }

    static func work(_ log: Log, _ gate: Gate, value: Int, endGate: Gate? = nil) -> @Sendable () async throws(ProxyError) -> Int {
        { () async throws(ProxyError) -> Int in
            log.starts.withLock { $0 += 1 }
            log.record("started \(value)")
            await gate.wait()
            if Task.isCancelled {
                log.record("cancelled \(value)")
                await endGate?.wait()
                throw ProxyError(status: 499, "cancelled")
            }
            return value
        }
    }

    @Test("two callers of one key share one run of the work and both get its result")
    func shared() async throws {
        let inFlight = InFlight<Int>()
        let (log, gate) = (Log(), Gate())
        let first = Task { try await inFlight.run("k", Self.work(log, gate, value: 7)) }
        #expect(await log.next() == "started 7")
        let second = Task { try await inFlight.run("k", Self.work(log, gate, value: 8)) }
        try await ServerWorkTests.until("the second caller to wait") { inFlight.waiterCount == 2 }
        gate.open()
        #expect(try await first.value == 7)
        #expect(try await second.value == 7, "the second caller gets the running work's result, not its own")
        #expect(log.starts.withLock { $0 } == 1)
        #expect(inFlight.count == 0 && inFlight.waiterCount == 0)
    }

    @Test(
        "a caller that leaves gets 499 and the work goes on for the other; the last one leaving cancels it; a new work under the key is not removed by the old one's end"
    )
    func leaving() async throws {
        let inFlight = InFlight<Int>()
        let (log, gate, oldEnd) = (Log(), Gate(), Gate())
        let first = Task { try await inFlight.run("k", Self.work(log, gate, value: 1, endGate: oldEnd)) }
        #expect(await log.next() == "started 1")
        let second = Task { try await inFlight.run("k", Self.work(log, gate, value: 2)) }
        try await ServerWorkTests.until("the second caller to wait") { inFlight.waiterCount == 2 }
        second.cancel()
        await #expect(throws: ProxyError.self) { try await second.value }
        #expect(inFlight.waiterCount == 1 && inFlight.count == 1, "the work goes on for the first caller")
        first.cancel()
        let gone = await #expect(throws: ProxyError.self) { try await first.value }
        #expect(gone?.status == 499)
        #expect(await log.next() == "cancelled 1", "the last caller's leaving cancels the work")
        #expect(inFlight.count == 0)

        // The old work has not ended yet (it waits at `oldEnd`): a new one starts under the key.
        let newGate = Gate()
        let third = Task { try await inFlight.run("k", Self.work(log, newGate, value: 3)) }
        #expect(await log.next() == "started 3")
        oldEnd.open()
        let fourth = Task { try await inFlight.run("k", Self.work(log, newGate, value: 4)) }
        try await ServerWorkTests.until("the fourth caller to join the new work") { inFlight.waiterCount == 2 }
        #expect(inFlight.count == 1, "the old work's end left the new one in place")
        newGate.open()
        let (thirdValue, fourthValue) = (try await third.value, try await fourth.value)
        #expect(thirdValue == 3 && fourthValue == 3, "the fourth caller gets the new work's result")
        #expect(log.starts.withLock { $0 } == 2)
    }

    @Test("a caller already cancelled gets 499 and starts nothing")
    func cancelledBeforeJoining() async throws {
        let inFlight = InFlight<Int>()
        let (log, gate) = (Log(), Gate())
        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await inFlight.run("k", Self.work(log, gate, value: 1))
        }
        let error = await #expect(throws: ProxyError.self) { try await caller.value }
        #expect(error?.status == 499)
        #expect(log.starts.withLock { $0 } == 0 && inFlight.count == 0)
    }
}
