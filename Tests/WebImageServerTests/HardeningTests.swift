import Foundation
import Testing
import WebImage
import WebImageTesting
@testable import WebImageServer
import WebImageTestSupport

/// Issue 36, item 5: the low findings of the attack on the proxy, each with the request that
/// showed it.
@Suite("Proxy hardening")
struct HardeningTests {
    private let jpeg = [UInt8](try! Fixture.data("gradient.jpg"))

    @Test("only the canonical spelling of a signature is valid: no padding, no stray bits, no query string")
    func canonicalSignatures() async throws {
        try await ServerHarness.with { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let signed = harness.signedPlain("w:10", "/photo.jpg")
            let signature = signed.dropFirst().prefix { $0 != "/" }
            let rest = signed.dropFirst(signature.count + 1)
            #expect(try await harness.get(signed).status == 200)
            // 32 bytes are 43 characters, the last holding 4 bits: another last character with the
            // same top bits decodes to the same bytes.
            let last = signature.last!
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            let index = alphabet.firstIndex(of: last)!
            let sibling = String(signature.dropLast()) + String(alphabet[index ^ 1])
            for variant in [signature + "=", signature + "==", Substring(sibling)] {
                let answer = try await harness.get("/" + variant + rest)
                #expect(answer.status == 403, "\(variant): \(answer.status)")
            }
            let query = try await harness.get(signed + "?v=2")
            #expect(query.status == 400 && query.text.contains("no query string"), "\(query.status) \(query.text)")
            #expect(query.header("X-Content-Type-Options") == "nosniff", "an error's text is never sniffed as HTML")
            #expect(harness.origin.requestCount("/photo.jpg") == 1)
        }
    }

    @Test("Accept's weights count: q=0 refuses a format, a wildcard offers none")
    func acceptWeights() async throws {
        #expect(AcceptHeader("image/webp;q=0,*/*").names("image/webp") == false)
        #expect(AcceptHeader("image/avif;q=0.5, image/webp").names("image/avif"))
        #expect(AcceptHeader("IMAGE/WEBP ; Q=0.0").names("image/webp") == false)
        #expect(AcceptHeader("image/*,*/*;q=0.8").names("image/webp") == false)
        #expect(AcceptHeader("image/webp;q=abc").names("image/webp") == false)
        #expect(AcceptHeader(nil).names("image/webp") == false)
        var negotiating = ServerHarness.configuration()
        negotiating.autoWebP = true
        try await ServerHarness.with(negotiating) { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let refused = try await harness.get(harness.signedPlain("w:10", "/photo.jpg"), headers: [("Accept", "image/webp;q=0,*/*")])
            #expect(refused.header("Content-Type") == "image/jpeg")
            let accepted = try await harness.get(harness.signedPlain("w:10", "/photo.jpg"), headers: [("Accept", "image/webp;q=0.9")])
            #expect(accepted.header("Content-Type") == "image/webp")
        }
    }

    @Test("HTTP/1.0 without keep-alive is answered with Connection: close and the connection closed; with keep-alive it stays")
    func http10() async throws {
        try await ServerHarness.with { harness in
            // Two requests on one connection each time: the second is answered only if the
            // connection was kept.
            let script = """
                import socket, sys
                def exchange(first):
                    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
                    s.sendall(first + b"GET /health HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
                    data = b""
                    while True:
                        try:
                            chunk = s.recv(65536)
                        except socket.timeout:
                            break
                        if not chunk:
                            break
                        data += chunk
                        if data.count(b"ok\\n") >= 2:
                            break
                    s.close()
                    answers = data.count(b"HTTP/1.1 200")
                    print(answers, b"connection: close" in data.lower())
                exchange(b"GET /health HTTP/1.0\\r\\n\\r\\n")
                exchange(b"GET /health HTTP/1.0\\r\\nConnection: keep-alive\\r\\n\\r\\n")
                """
            let child = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, String(harness.port)])
            _ = try await child.waitForExit()
            #expect(child.lines == ["1 True", "2 False"], "\(child.lines)")
        }
    }

    @Test("keys and salts from files (kept out of ps): --key-file and --salt-file, or WEBIMAGE_KEY_FILE")
    func keyFiles() async throws {
        let workspace = try CommandWorkspace()
        let directory = try TemporaryDirectory("key-files")
        let keys = directory.url.appendingPathComponent("keys")
        let salts = directory.url.appendingPathComponent("salts")
        try "736563726574\n\n  00ff  \n".write(to: keys, atomically: true, encoding: .utf8)
        try "68656C6C6F\n".write(to: salts, atomically: true, encoding: .utf8)
        let mismatched = try await workspace.run(["serve", "--key-file", keys.path, "--salt-file", salts.path])
        #expect(mismatched.status == 2 && mismatched.standardError.contains("2 keys, 1 salts"), "\(mismatched.standardError)")
        let missing = try await workspace.run(["serve", "--salt-file", salts.path], environment: ["WEBIMAGE_KEY_FILE": "/nonexistent"])
        #expect(missing.status == 2 && missing.standardError.contains("--key-file: cannot read /nonexistent"), "\(missing.standardError)")
        try "736563726574\n".write(to: keys, atomically: true, encoding: .utf8)
        let arguments = [
            "serve", "--bind", "127.0.0.1:0", "--key-file", keys.path, "--salt-file", salts.path, "--result-cache-dir",
            directory.path + "/cache",
        ]
        let server = try ChildProcess(ChildProcess.builtProduct("webimage"), arguments)
        let line = try await server.waitForLine { $0.hasPrefix("listening on ") }
        #expect(line.hasPrefix("listening on http://127.0.0.1:"))
        server.kill()
        _ = try await server.waitForExit()
    }
}
