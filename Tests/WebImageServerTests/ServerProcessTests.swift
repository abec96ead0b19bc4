import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageTesting
@testable import WebImageCaching

#if canImport(Glibc)
import Glibc
import WebImageTestSupport
#endif

/// `webimage serve` as its own process: what a crash leaves behind.
@Suite("Server as a process", .serialized)
struct ServerProcessTests {
    @Test("kill -9 while results are written: no torn entry; after a restart every stored result is whole and served from the cache")
    func killDuringResultWrites() async throws {
        let origin = try await OriginServer.start()
        origin.route("/photo.jpg", .ok([UInt8](try Fixture.data("large-progressive.jpg")), contentType: "image/jpeg").tagged("\"p1\""))
        let directory = try TemporaryDirectory("serve-crash")
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let answered = try await Self.crash(directory: directory.path, origin: origin, client: client)
        #expect(answered.count >= 20)

        let results = try DiskCache(
            directory: directory.url.appendingPathComponent("results"), configuration: DiskCacheConfiguration(sizeLimit: 0))
        #expect(FileSystem.names(in: directory.path + "/results/tmp").isEmpty, "no temporary files after open")
        #expect(FileSystem.names(in: directory.path + "/sources/tmp").isEmpty)
        for entry in results.entries() {
            let key = try #require(entry.key)
            let image = try CodersManager.shared.decode(try #require(try results.data(for: key)))
            #expect(image.pixelWidth == Self.width(inKey: key), "\(key)")
            #expect(entry.metadata.etag != nil && entry.metadata.contentType == "image/png")
        }
        #expect(results.entries().count >= answered.count, "every answered result was stored before it was sent")
        results.close()

        let restarted = try await Self.start(directory: directory.path)
        for (width, body) in answered.prefix(5) {
            let url = "\(restarted.address)/unsafe/w:\(width)/plain/\(origin.url("/photo.jpg"))@png"
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "Server-Timing")?.contains("result") == true, "from the result cache")
            #expect(Data(buffer: try await response.body.collect(upTo: 1 << 24)) == body)
        }
        restarted.process.kill()
        _ = try await restarted.process.waitForExit()
        try await client.shutdown()
        try await origin.shutdown()
    }

    @Test("a second server on a cache directory another one holds refuses to start and says why; the first keeps serving")
    func cacheDirectoryIsNotShared() async throws {
        let directory = try TemporaryDirectory("serve-shared")
        let first = try await Self.start(directory: directory.path)
        let errors = directory.url.appendingPathComponent("second.txt")
        let arguments = ["serve", "--bind", "127.0.0.1:0", "--allow-unsigned", "--result-cache-dir", directory.path]
        let second = try ChildProcess(ChildProcess.builtProduct("webimage"), arguments, standardError: errors)
        let exit = try await second.waitForExit()
        let message = try String(contentsOf: errors, encoding: .utf8)
        #expect(!exit.signaled && exit.status == 1, "\(message)")
        #expect(
            message.contains("the cache directory \(directory.path) is in use by another process or not writable"),
            "\(message)")
        #expect(second.lines.isEmpty, "it never listened")

        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let health = try await client.execute(HTTPClientRequest(url: first.address + "/health"), timeout: .seconds(10))
        #expect(health.status == .ok)
        first.process.terminate()
        #expect(try await first.process.waitForExit().status == 0)
        let third = try await Self.start(directory: directory.path)
        third.process.kill()
        _ = try await third.process.waitForExit()
        try await client.shutdown()
    }

    @Test(
        "after a crash (SIGABRT, with Swift's crash reporter running) or a SIGKILL, a new server binds the same port at once",
        arguments: [SIGABRT, SIGKILL])
    func restartOnTheSamePort(signal: Int32) async throws {
        let directory = try TemporaryDirectory("serve-restart")
        // The crash report goes to a file, not into the test's output.
        let first = try await Self.start(
            directory: directory.path + "/first", standardError: directory.url.appendingPathComponent("crash.txt"))
        let port = try #require(first.address.split(separator: ":").last.map(String.init))
        let listener = try #require(Self.listeningDescriptorFlags(processID: first.process.processID), "the listener's fdinfo")
        #expect(listener & 0o2_000_000 != 0, "the listening socket is close-on-exec (flags \(String(listener, radix: 8)))")
        first.process.send(signal)
        // The crash reporter runs while the crashed process waits for it; the port must be free
        // now, not when it is done.
        let second = try await Self.start(directory: directory.path + "/second", bind: "127.0.0.1:\(port)")
        #expect(second.address.hasSuffix(":\(port)"))
        second.process.kill()
        _ = try await second.process.waitForExit()
        // A signal sent from outside is not a real crash: the reporter, reparented once its
        // crashed process is gone, does not end by itself and keeps the output pipe open. Both are
        // stopped here, through their process group: listing the crashed process's children
        // could run before it had started the reporter (seen once under AddressSanitizer with the
        // suite in parallel), which then held the pipe past the wait's timeout.
        first.process.killProcessGroup()
        _ = try await first.process.waitForExit()
    }

    /// The `flags:` of `/proc/PID/fdinfo` for the process's first listening TCP socket.
    private static func listeningDescriptorFlags(processID: Int32) -> Int? {
        let listening = Set(
            String(decoding: FileHandle(forReadingAtPath: "/proc/\(processID)/net/tcp")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
                .split(separator: "\n").dropFirst()
                .compactMap { line -> String? in
                    let fields = line.split(separator: " ")
                    return fields.count > 9 && fields[3] == "0A" ? String(fields[9]) : nil
                })
        let directory = "/proc/\(processID)/fd"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(name)"),
                target.hasPrefix("socket:["), listening.contains(String(target.dropFirst(8).dropLast()))
            else { continue }
            let info = (try? String(contentsOfFile: "/proc/\(processID)/fdinfo/\(name)", encoding: .utf8)) ?? ""
            let flags = info.split(separator: "\n").first { $0.hasPrefix("flags:") }?.split(separator: "\t").last
            return flags.flatMap { Int($0.trimmingCharacters(in: .whitespaces), radix: 8) }
        }
        return nil
    }

    /// Starts a server on `directory`, asks it for 200 distinct results with many in flight,
    /// and kills it with SIGKILL once 20 are answered; returns the answered widths and bodies.
    private static func crash(directory: String, origin: OriginServer, client: HTTPClient) async throws -> [(Int, Data)] {
        let server = try await start(directory: directory)
        let answers = Answers()
        let (twentieth, reached) = AsyncStream<Void>.makeStream()
        await withTaskGroup(of: Void.self) { group in
            for width in 10..<210 {
                group.addTask {
                    let url = "\(server.address)/unsafe/w:\(width)/plain/\(origin.url("/photo.jpg"))@png"
                    // Requests cut off by the kill fail; only whole answers count.
                    guard let response = try? await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60)),
                        response.status == .ok, let body = try? await response.body.collect(upTo: 1 << 24)
                    else { return }
                    let count = answers.list.withLock { answers in
                        answers.append((width, Data(buffer: body)))
                        return answers.count
                    }
                    if count == 20 { reached.yield() }
                }
            }
            for await _ in twentieth { break }
            server.process.kill()
        }
        let exit = try await server.process.waitForExit()
        #expect(exit.signaled && exit.status == SIGKILL)
        return answers.list.withLock { $0 }
    }

    /// The whole answers so far, shared by the request tasks.
    private final class Answers: Sendable {
        let list = Locked<[(Int, Data)]>([])
    }

    private static func start(directory: String, bind: String = "127.0.0.1:0", standardError: URL? = nil) async throws -> (
        process: ChildProcess, address: String
    ) {
        let arguments = [
            "serve", "--bind", bind, "--allow-unsigned", "--allow-loopback-sources", "--result-cache-dir", directory,
            "--concurrency", "2", "--queue", "1000", "--log-level", "error",
        ]
        let process = try ChildProcess(ChildProcess.builtProduct("webimage"), arguments, standardError: standardError)
        let line = try await process.waitForLine { $0.hasPrefix("listening on ") }
        return (process, String(line.dropFirst("listening on ".count)))
    }

    /// The width of a result-cache key: its second line is the canonical options, which start
    /// `rs:TYPE:WIDTH:HEIGHT:…`.
    private static func width(inKey key: String) -> Int? {
        let options = key.split(separator: "\n").dropFirst().first ?? ""
        let resize = options.split(separator: "/").first?.split(separator: ":") ?? []
        return resize.count > 2 ? Int(resize[2]) : nil
    }
}
