import AsyncHTTPClient
import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
import WebImage
import WebImageTesting
@testable import WebImageServer
import WebImageTestSupport

/// imgproxy's client-side limits, read from `server/config.go` and `server/server.go`:
/// `IMGPROXY_MAX_CLIENTS` (2048; `netutil.LimitListener`, so clients over it wait to be
/// accepted), `IMGPROXY_READ_REQUEST_TIMEOUT` (10 s, Go's `ReadTimeout`: the whole request),
/// `IMGPROXY_WRITE_RESPONSE_TIMEOUT` (10 s, the write deadline `server/responsewriter/writer.go`
/// sets) and `IMGPROXY_GRACEFUL_STOP_TIMEOUT` (20 s, the shutdown context's timeout).
@Suite("Server client limits", .serialized)
struct ServerClientLimitsTests {
    @Test("the connection count stops accepting at the limit and resumes below it")
    func connectionCount() {
        var count = ConnectionCount(maximum: 2)
        #expect(count.opened() == .none)
        #expect(count.opened() == .stopAccepting)
        #expect(count.opened() == .none, "one of a batch already queued")
        #expect(count.closed() == .none, "still at the limit")
        #expect(count.closed() == .resumeAccepting)
        #expect(count.closed() == .none)
        #expect(count.opened() == .none && count.opened() == .stopAccepting)
    }

    /// A connection with the deadline handlers around an HTTP decoder, on a clock the test moves.
    func connection() throws -> (EmbeddedChannel, EmbeddedEventLoop) {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(loop: loop)
        let deadlines = ConnectionDeadlines(readTimeout: .seconds(10), writeTimeout: .seconds(10))
        try channel.pipeline.syncOperations.addHandlers([
            deadlines.bytesHandler, ByteToMessageHandler(HTTPRequestDecoder()), deadlines.partsHandler,
        ])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, loop)
    }

    @Test("a request must arrive whole and a response be written whole within their deadlines")
    func deadlines() throws {
        let (slow, slowLoop) = try connection()
        try slow.writeInbound(ByteBuffer(string: "GET /health HTTP/1.1\r\nHost: a\r\n"))
        slowLoop.advanceTime(by: .seconds(9))
        #expect(slow.isActive, "within the read deadline")
        slowLoop.advanceTime(by: .seconds(2))
        #expect(!slow.isActive, "a header still unfinished after 10 seconds closes the connection")

        let (reader, readerLoop) = try connection()
        try reader.writeInbound(ByteBuffer(string: "GET /health HTTP/1.1\r\nHost: a\r\n\r\n"))
        readerLoop.advanceTime(by: .seconds(30))
        #expect(reader.isActive, "a whole request stops the read deadline")
        try reader.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        readerLoop.advanceTime(by: .seconds(11))
        #expect(!reader.isActive, "a response begun and not finished within 10 seconds closes the connection")

        let (whole, wholeLoop) = try connection()
        try whole.writeInbound(ByteBuffer(string: "GET /health HTTP/1.1\r\nHost: a\r\n\r\n"))
        try whole.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        try whole.writeOutbound(HTTPServerResponsePart.end(nil))
        wholeLoop.advanceTime(by: .seconds(30))
        #expect(whole.isActive, "a response written whole stops the write deadline")
        _ = try whole.finish()
        _ = try reader.finish(acceptAlreadyClosed: true)
        // The decoder reports the request it was cut off in the middle of: the expected end here.
        #expect(throws: HTTPParserError.self) { try slow.finish(acceptAlreadyClosed: true) }
    }

    @Test("draining: an idle connection waits out the grace, a request in it is answered and ends it, a response says close")
    func drainDecisions() {
        var idle = ConnectionDrain()
        #expect(
            idle.requestHead() == .none && idle.responseHead() == false && idle.responseEnd() == .none, "not draining: keep-alive as usual")
        #expect(idle.quiesce() == .startGrace, "idle when the drain begins: the grace starts")
        #expect(idle.quiesce() == .none, "told twice, once")
        #expect(idle.requestHead() == .cancelGrace, "a request sent in the grace is taken")
        #expect(idle.responseHead() == true, "and its response says Connection: close")
        #expect(idle.responseEnd() == .closeAfterWrite)

        var busy = ConnectionDrain()
        _ = busy.requestHead()
        #expect(busy.quiesce() == .none, "a request in flight: no grace, the response ends it")
        #expect(busy.responseHead() == true)
        #expect(busy.responseEnd() == .closeAfterWrite)

        var late = ConnectionDrain()
        _ = late.requestHead()
        #expect(late.responseHead() == false, "the head went out before the drain, without a close")
        #expect(late.quiesce() == .none)
        #expect(late.responseEnd() == .startGrace, "so the client may reuse it: the grace, as for any idle connection")
    }

    /// A connection with the drain handler after an HTTP decoder and encoder, on a clock the test moves.
    func drainingConnection(grace: TimeAmount) throws -> (EmbeddedChannel, EmbeddedEventLoop) {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandlers([
            HTTPResponseEncoder(), ByteToMessageHandler(HTTPRequestDecoder()), ConnectionDrainHandler(grace: grace),
        ])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, loop)
    }

    /// Answers the request just read with a 200 and returns the bytes written.
    func answer(_ channel: EmbeddedChannel) throws -> String {
        var head = HTTPResponseHead(version: .http1_1, status: .ok)
        head.headers.add(name: "Content-Length", value: "0")
        try channel.writeOutbound(HTTPServerResponsePart.head(head))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    @Test("the drain handler holds an idle connection for the grace, answers a request in it with Connection: close, then closes")
    func drainHandler() throws {
        let request = ByteBuffer(string: "GET /a HTTP/1.1\r\nHost: a\r\n\r\n")
        let (reused, reusedLoop) = try drainingConnection(grace: .seconds(1))
        try reused.writeInbound(request)
        #expect(try !answer(reused).lowercased().contains("connection: close"), "before the drain: kept alive")
        reused.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        reusedLoop.advanceTime(by: .milliseconds(900))
        #expect(reused.isActive, "idle, within the grace: still open for a request on its way")
        try reused.writeInbound(request)
        reusedLoop.advanceTime(by: .seconds(5))
        #expect(reused.isActive, "a request arrived: the grace no longer closes it under the request")
        #expect(try answer(reused).lowercased().contains("connection: close"))
        #expect(!reused.isActive, "closed once the answer is written")

        let (quiet, quietLoop) = try drainingConnection(grace: .seconds(1))
        quiet.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        quietLoop.advanceTime(by: .milliseconds(999))
        #expect(quiet.isActive)
        quietLoop.advanceTime(by: .milliseconds(1))
        #expect(!quiet.isActive, "no request in the grace: closed")

        let (busy, _) = try drainingConnection(grace: .seconds(1))
        try busy.writeInbound(request)
        busy.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(busy.isActive, "a request in flight is answered")
        #expect(try answer(busy).lowercased().contains("connection: close"))
        #expect(!busy.isActive)
        for channel in [reused, quiet, busy] { _ = try channel.finish(acceptAlreadyClosed: true) }
    }

    @Test("over real connections: a slowly sent header is cut off; at the client limit the listener pauses, then resumes")
    func served() async throws {
        var configuration = ServerHarness.configuration()
        configuration.readRequestTimeout = .milliseconds(300)
        configuration.maximumClients = 1
        try await ServerHarness.with(configuration) { harness in
            // Without the read deadline only the 60-second idle timeout would end this.
            let partial = try await RawConnection.exchange(port: harness.port, sending: Data("GET /health HTTP/1.1\r\nHost: a\r\n".utf8))
            #expect(partial.closed && partial.text.isEmpty)
            let first = HTTPClient(eventLoopGroupProvider: .singleton)
            let second = HTTPClient(eventLoopGroupProvider: .singleton)
            let request = HTTPClientRequest(url: "http://127.0.0.1:\(harness.port)/health")
            #expect(try await first.execute(request, timeout: .seconds(10)).status == .ok)
            // The first client keeps its connection: the one allowed.
            let limiter = try #require(harness.server.connectionLimiter)
            #expect(!limiter.isAccepting)
            #expect(try await limiter.listenerReads() == false, "the listener stopped accepting")
            async let waiting = second.execute(request, timeout: .seconds(10))
            try await first.shutdown()
            #expect(try await waiting.status == .ok, "accepted once the first connection closed")
            try await second.shutdown()
        }
    }

    @Test("SIGTERM waits for requests in flight at most the graceful stop timeout")
    func gracefulStop() async throws {
        let origin = try await OriginServer.start()
        origin.route("/stall.jpg", OriginResponse(delivery: .neverRespond))
        let directory = try TemporaryDirectory("serve-stop")
        // The request would wait 60 seconds for its source; the stop waits 1.
        let arguments = [
            "serve", "--bind", "127.0.0.1:0", "--allow-unsigned", "--allow-loopback-sources", "--result-cache-dir", directory.path,
            "--download-timeout", "60", "--request-timeout", "60", "--graceful-stop-timeout", "1", "--log-level", "error",
        ]
        let process = try ChildProcess(ChildProcess.builtProduct("webimage"), arguments)
        let line = try await process.waitForLine { $0.hasPrefix("listening on ") }
        let address = String(line.dropFirst("listening on ".count))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let request = HTTPClientRequest(url: "\(address)/unsafe/w:10/plain/\(origin.url("/stall.jpg"))")
        let pending = Task { try? await client.execute(request, timeout: .seconds(90)) }
        _ = try await origin.waitForRequests(1, to: "/stall.jpg")
        process.terminate()
        // Without the cap the drain would wait the 60-second source; the wait for the exit gives up at 30.
        let exit = try await process.waitForExit(timeout: .seconds(30))
        #expect(exit.status == 0 && !exit.signaled, "a clean exit: \(exit)")
        let answer = await pending.value
        #expect(answer?.status != .ok, "the request in flight was cut, not answered with an image")
        try await client.shutdown()
        try await origin.shutdown()
    }

    @Test("IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT: connections to a source's host are reused, or with 0 none is")
    func sourceKeepAlive() async throws {
        let png = [UInt8](
            try CodersManager.shared.encode(
                Image(pixels: PixelBuffer(width: 2, height: 2, straightRGBA: [UInt8](repeating: 255, count: 16))), as: .png))
        for (timeout, reused) in [(nil as Duration?, true), (Duration.zero, false)] {
            var configuration = ServerHarness.configuration()
            configuration.sourceKeepAliveTimeout = timeout
            try await ServerHarness.with(configuration) { harness in
                harness.origin.route("/a.png", .ok(png, contentType: "image/png"))
                harness.origin.route("/b.png", .ok(png, contentType: "image/png"))
                #expect(try await harness.get(harness.signedPlain("w:1", "/a.png")).status == 200)
                #expect(try await harness.get(harness.signedPlain("w:1", "/b.png")).status == 200)
                let first = try await harness.origin.waitForRequests(1, to: "/a.png")[0]
                let second = try await harness.origin.waitForRequests(1, to: "/b.png")[0]
                #expect((first.connectionID == second.connectionID) == reused, "\(String(describing: timeout))")
                #expect((first.header("Connection")?.lowercased() == "close") == !reused)
            }
        }
    }

    @Test("IMGPROXY_ENABLE_DEBUG_HEADERS: the source's size and bytes and the result's size, on a miss and on cached answers")
    func debugHeaders() async throws {
        let png = [UInt8](
            try CodersManager.shared.encode(
                Image(pixels: PixelBuffer(width: 200, height: 150, straightRGBA: [UInt8](repeating: 90, count: 200 * 150 * 4))), as: .png))
        for memory in [64 * 1024 * 1024, 0] {
            var configuration = ServerHarness.configuration()
            configuration.enablesDebugHeaders = true
            configuration.resultMemoryCacheBytes = memory  // 0: the second answer comes from the disk cache
            try await ServerHarness.with(configuration) { harness in
                harness.origin.route("/p.png", .ok(png, contentType: "image/png"))
                for round in 0..<2 {
                    let answer = try await harness.get(harness.signedPlain("rs:fit:100:100", "/p.png"))
                    let facts = ["X-Origin-Width", "X-Origin-Height", "X-Origin-Content-Length", "X-Result-Width", "X-Result-Height"].map {
                        answer.header($0)
                    }
                    #expect(facts == ["200", "150", String(png.count), "100", "75"], "round \(round), memory \(memory): \(facts)")
                }
            }
        }
        try await ServerHarness.with { harness in
            harness.origin.route("/p.png", .ok(png, contentType: "image/png"))
            let plain = try await harness.get(harness.signedPlain("rs:fit:100:100", "/p.png"))
            #expect(plain.header("X-Origin-Width") == nil, "off by default")
        }
    }
}
