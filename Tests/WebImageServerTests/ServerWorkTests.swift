import Foundation
import Testing
import WebImage
import WebImageTesting
@testable import WebImageServer
import WebImageTestSupport

/// Issue 36, item 2: work must not outlive its clients, and waiting is bounded. A slot is held by
/// processing only (never by a download); a client that goes away cancels its queued and running
/// work unless another request shares it; the request timeout covers the queue; a timed-out job
/// is cancelled between its steps.
@Suite("Server work and its clients", .serialized)
struct ServerWorkTests {
    private let jpeg = [UInt8](try! Fixture.data("gradient.jpg"))

    /// A JPEG whose blurring and sharpening take a second or more in a debug build: work that
    /// holds a slot long enough to be seen. Smaller under a sanitizer, which slows it down ten times.
    static let heavy: [UInt8] = {
        let side = Sanitizer.isActive ? 500 : 1200
        let pixels = PixelBuffer(width: side, height: side, straightRGBA: [UInt8](repeating: 180, count: side * side * 4))
        return [UInt8](try! CodersManager.shared.encode(Image(pixels: pixels), as: .jpeg))
    }()

    /// Options that take long on ``heavy``: six filter steps, each a point where a cancelled job stops.
    static let slow = "bl:40/sh:40/bl:40/pix:3"

    /// Waits until `condition` holds, checking as the server's state changes; fails after `limit`.
    static func until(_ what: String, within limit: Duration = .seconds(60), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < deadline else { throw TimeoutError(what: what) }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    struct TimeoutError: Error, CustomStringConvertible {
        var what: String
        var description: String { "timed out waiting for \(what)" }
    }

    @Test("downloads hold no processing slot: two stalled sources do not stop a third request")
    func downloadsHoldNoSlot() async throws {
        var oneSlot = ServerHarness.configuration()
        oneSlot.concurrency = 1
        oneSlot.queueLength = 0
        oneSlot.downloadTimeout = .seconds(30)
        try await ServerHarness.with(oneSlot) { harness in
            for index in 0..<2 { harness.origin.route("/stall\(index).jpg", OriginResponse(delivery: .neverRespond)) }
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let stalled = (0..<2).map { index in Task { try? await harness.get(harness.signedPlain("w:10", "/stall\(index).jpg")) } }
            for index in 0..<2 { _ = try await harness.origin.waitForRequests(1, to: "/stall\(index).jpg") }
            let answer = try await harness.get(harness.signedPlain("w:10", "/photo.jpg"))
            #expect(answer.status == 200, "\(answer.status) \(answer.text)")
            for task in stalled { task.cancel() }
            // The abandoned downloads are cancelled with their requests: nothing is left running.
            try await Self.until("the stalled requests to end") { harness.server.proxy.inFlightCount == 0 }
        }
    }

    @Test("a full queue answers 503 with Retry-After at once")
    func queueFull() async throws {
        var oneAtATime = ServerHarness.configuration()
        oneAtATime.concurrency = 1
        oneAtATime.queueLength = 0
        oneAtATime.processingTimeout = .seconds(120)
        oneAtATime.requestTimeout = .seconds(120)
        try await ServerHarness.with(oneAtATime) { harness in
            harness.origin.route("/heavy.jpg", .ok(Self.heavy, contentType: "image/jpeg"))
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let gate = harness.server.proxy.gate
            let blocking = Task { try await harness.get(harness.signedPlain(Self.slow, "/heavy.jpg")) }
            try await Self.until("the heavy job to hold the slot") { gate.running == 1 }
            let refused = try await harness.get(harness.signedPlain("w:10", "/photo.jpg"))
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "1")
            #expect(refused.header("Cache-Control") == "no-store")
            #expect(try await blocking.value.status == 200)
            #expect(try await harness.get(harness.signedPlain("w:10", "/photo.jpg")).status == 200)
        }
    }

    @Test("clients that go away leave the queue and cancel their running work; a normal miss is then served at once")
    func abandonedClients() async throws {
        var oneSlot = ServerHarness.configuration()
        oneSlot.concurrency = 1
        oneSlot.queueLength = 20
        try await ServerHarness.with(oneSlot) { harness in
            harness.origin.route("/heavy.jpg", .ok(Self.heavy, contentType: "image/jpeg"))
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let gate = harness.server.proxy.gate
            // Distinct options: six pieces of work, one running and five queued.
            let clients = (0..<6).map { index in
                Task { try? await harness.get(harness.signedPlain(Self.slow + "/w:\(1100 + index)", "/heavy.jpg")) }
            }
            try await Self.until("one running and five queued") { gate.running == 1 && gate.queued == 5 }
            for client in clients { client.cancel() }
            try await Self.until("the queue to empty and the running job to stop") { gate.queued == 0 && gate.running == 0 }
            #expect(harness.server.proxy.inFlightCount == 0)
            let answer = try await harness.get(harness.signedPlain("w:10", "/photo.jpg"))
            #expect(answer.status == 200)
        }
    }

    @Test("work two clients share goes on when one leaves, and ends for the one who stays")
    func sharedWorkOutlivesOneClient() async throws {
        var oneSlot = ServerHarness.configuration()
        oneSlot.concurrency = 1
        oneSlot.processingTimeout = .seconds(120)
        oneSlot.requestTimeout = .seconds(120)
        try await ServerHarness.with(oneSlot) { harness in
            // The source is held until both clients have joined and one has left, so the shared
            // work is known to be in flight at each step (a job that merely takes long could end
            // before the leaving client is seen to go).
            let hold = OriginHold()
            var held = OriginResponse.ok(jpeg, contentType: "image/jpeg")
            held.delivery = .held(hold)
            harness.origin.route("/photo.jpg", held)
            let path = harness.signedPlain(Self.slow, "/photo.jpg")
            let leaving = Task { try? await harness.get(path) }
            _ = try await harness.origin.waitForRequests(1, to: "/photo.jpg")
            let staying = Task { try await harness.get(path) }
            try await Self.until("both requests to wait for the one job") { harness.server.proxy.inFlightWaiterCount == 2 }
            leaving.cancel()
            try await Self.until("the leaving client to stop waiting") { harness.server.proxy.inFlightWaiterCount == 1 }
            #expect(harness.server.proxy.inFlightCount == 1, "the shared work goes on")
            hold.release()
            let answer = try await staying.value
            #expect(answer.status == 200)
            #expect(harness.origin.requestCount("/photo.jpg") == 1, "one download, one job, for both")
        }
    }

    @Test("the request timeout covers the queue: a waiting request gets 504 in time and leaves the queue")
    func requestTimeoutCoversTheQueue() async throws {
        var oneSlot = ServerHarness.configuration()
        oneSlot.concurrency = 1
        oneSlot.requestTimeout = .milliseconds(500)
        oneSlot.processingTimeout = .seconds(60)
        try await ServerHarness.with(oneSlot) { harness in
            harness.origin.route("/heavy.jpg", .ok(Self.heavy, contentType: "image/jpeg"))
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let gate = harness.server.proxy.gate
            // The first request times out too, and its job, which nobody waits for, is cancelled.
            let first = Task { try await harness.get(harness.signedPlain(Self.slow, "/heavy.jpg")) }
            try await Self.until("the heavy job to hold the slot") { gate.running == 1 }
            let waiting = try await harness.get(harness.signedPlain("w:10", "/photo.jpg"))
            #expect(waiting.status == 504 && waiting.text.contains("the request took longer"), "\(waiting.status) \(waiting.text)")
            #expect(gate.queued == 0, "it left the queue")
            #expect(try await first.value.status == 504)
            try await Self.until("the abandoned job to stop") { gate.running == 0 }
        }
    }

    @Test("a processing timeout answers 504 and cancels the job; the slot is free for the next request")
    func processingTimeoutCancelsTheJob() async throws {
        var oneSlot = ServerHarness.configuration()
        oneSlot.concurrency = 1
        oneSlot.processingTimeout = .milliseconds(300)
        try await ServerHarness.with(oneSlot) { harness in
            harness.origin.route("/heavy.jpg", .ok(Self.heavy, contentType: "image/jpeg"))
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let timedOut = try await harness.get(harness.signedPlain(Self.slow, "/heavy.jpg"))
            #expect(timedOut.status == 504 && timedOut.text.contains("processing took longer"), "\(timedOut.status) \(timedOut.text)")
            try await Self.until("the cancelled job to stop") { harness.server.proxy.gate.running == 0 }
            #expect(try await harness.get(harness.signedPlain("w:10", "/photo.jpg")).status == 200)
        }
    }
}
