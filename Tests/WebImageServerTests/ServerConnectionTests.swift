import Foundation
import Testing
import WebImageTesting
@testable import WebImageServer

#if canImport(Glibc)
import Glibc
import WebImageTestSupport
#endif

/// The limits that protect the server from slow or hostile clients and slow sources, over real
/// connections to 127.0.0.1: the whole-request deadline, the request header size, idle clients.
@Suite("Server connection limits", .serialized)
struct ServerConnectionTests {
    @Test("a request past its deadline is answered 504 while its source still stalls")
    func requestTimeout() async throws {
        var hurried = ServerHarness.configuration()
        hurried.requestTimeout = .milliseconds(300)
        hurried.downloadTimeout = .seconds(2)
        try await ServerHarness.with(hurried) { harness in
            harness.origin.route("/stall.jpg", OriginResponse(delivery: .neverRespond))
            let answer = try await harness.get(harness.signedPlain("w:10", "/stall.jpg"))
            #expect(answer.status == 504)
            #expect(answer.text == "the request took longer than 0.3 seconds\n")
            #expect(answer.header("Cache-Control") == "no-store")
        }
    }

    @Test("request headers over the limit get 400 and a closed connection; an idle client is dropped after the idle timeout")
    func slowAndHostileClients() async throws {
        var strict = ServerHarness.configuration()
        strict.maximumRequestHeaderBytes = 4 * 1024
        strict.idleTimeout = 1
        try await ServerHarness.with(strict) { harness in
            let oversized = "GET /health HTTP/1.1\r\nHost: a\r\nX-Padding: \(String(repeating: "a", count: 8 * 1024))\r\n\r\n"
            let answer = try await RawConnection.exchange(port: harness.port, sending: Data(oversized.utf8))
            #expect(answer.text.hasPrefix("HTTP/1.1 400 "), "\(answer.text)")
            #expect(answer.closed)
            let fitting =
                "GET /health HTTP/1.1\r\nHost: a\r\nX-Padding: \(String(repeating: "a", count: 1024))\r\nConnection: close\r\n\r\n"
            let healthy = try await RawConnection.exchange(port: harness.port, sending: Data(fitting.utf8))
            #expect(healthy.text.hasPrefix("HTTP/1.1 200 "))
            let idle = try await RawConnection.exchange(port: harness.port, sending: Data())
            #expect(idle.closed && idle.text.isEmpty, "closed by the server with nothing sent")
        }
    }
}

/// One blocking TCP exchange on a thread of its own: connect to 127.0.0.1, send, then read until
/// the server closes the connection (or 10 seconds pass, which the caller sees as not closed).
enum RawConnection {
    struct Answer: Sendable {
        var text: String
        var closed: Bool
    }

    struct Failure: Error {
        var call: String
    }

    static func exchange(port: Int, sending bytes: Data) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try run(port: port, sending: bytes) })
            }
        }
    }

    private static func run(port: Int, sending bytes: Data) throws -> Answer {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(call: "socket") }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(call: "connect") }
        if !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
            guard sent == bytes.count else { throw Failure(call: "send") }
        }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 { return Answer(text: String(decoding: received, as: UTF8.self), closed: true) }
            // A reset after the answer also ends the connection; a timeout does not.
            if count < 0 {
                return Answer(text: String(decoding: received, as: UTF8.self), closed: errno == ECONNRESET)
            }
            received.append(contentsOf: buffer[0..<count])
        }
    }
}
