import Foundation
import Testing
import WebImageTesting
@testable import WebImage
@testable import WebImageCaching

#if canImport(Glibc)
import Glibc
import WebImageTestSupport
#endif

/// Disk cache faults that need a real second process: a crash, a concurrent owner, a user who
/// cannot write, a file-size limit. Serialized: a child started while another runs can inherit
/// the other's output pipe and hold it open past that child's exit.
@Suite("DiskCache across processes", .serialized)
struct DiskCacheProcessTests {
    private let child = ChildProcess.builtProduct("WebImageTestChild")

    @Test(
        "kill -9 in the middle of 1,000 writes: every entry reads back whole, no temporary file remains, the index agrees with the files",
        arguments: DiskLayout.allCases)
    func crashDuringWrites(layout: DiskLayout) async throws {
        let directory = try TemporaryDirectory("crash")
        let writer = try ChildProcess(child, ["write-loop", directory.path, "1000", layout.rawValue])
        try await writer.waitForLine { $0 == "stored 250" }
        writer.kill()
        let exit = try await writer.waitForExit()
        #expect(exit.signaled && exit.status == SIGKILL)
        let acknowledged = writer.lines.compactMap { $0.hasPrefix("stored ") ? Int($0.dropFirst(7)) : nil }.max() ?? -1
        #expect(acknowledged >= 250)

        let cache = try DiskCache(directory: directory.url, configuration: layout.apply(DiskCacheConfiguration(sizeLimit: 0)))
        #expect(FileSystem.names(in: directory.path + "/tmp").isEmpty, "no temporary files after open")
        #expect(cache.entries().allSatisfy { $0.isPacked == (layout == .packed) })
        for entry in cache.entries() {
            let key = try #require(entry.key)
            let index = try #require(Int(key.dropFirst("https://example.com/".count).dropLast(".png".count)))
            #expect(try cache.data(for: key) == TestPayload.bytes(index), "\(key)")
            #expect(entry.metadata.etag == "\"\(index)\"")
        }
        for index in 0...min(acknowledged, 999) {
            #expect(cache.contains("https://example.com/\(index).png"), "entry \(index) was acknowledged")
        }
        var files = Set<String>()
        for folder in FileSystem.names(in: directory.path) where FileID.isHexByte(folder) {
            for name in FileSystem.names(in: directory.path + "/" + folder) { files.insert(folder + "/" + name) }
        }
        #expect(files == Set(cache.entries().filter { !$0.isPacked }.map { $0.folderName + "/" + $0.fileName }))
    }

    @Test("a second process opens the cache read-only while the first holds it")
    func secondProcessIsReadOnly() async throws {
        let directory = try TemporaryDirectory("shared")
        let owner = try DiskCache(directory: directory.url)
        try owner.store(Data(repeating: 7, count: 1234), for: "shared-key")
        let reader = try ChildProcess(child, ["open", directory.path, "read-only", "shared-key"])
        do { try await reader.waitForExit(timeout: .seconds(15)) } catch {
            Issue.record("lines so far: \(reader.lines), events: \(reader.events.events)")
        }
        #expect(reader.lines == ["opening", "read-only true", "read 1234", "store failed cacheIO"])
        #expect(!owner.contains("from-child"))
        owner.close()
    }

    @Test("with the wait policy, a second process blocks until the owner closes")
    func secondProcessWaits() async throws {
        let directory = try TemporaryDirectory("waiting")
        let owner = try DiskCache(directory: directory.url)
        let waiter = try ChildProcess(child, ["open", directory.path, "wait", "late-key"])
        try await waiter.waitForLine { $0 == "opening" }
        try owner.store(Data(repeating: 1, count: 99), for: "late-key")
        owner.close()
        try await waiter.waitForExit()
        #expect(waiter.lines == ["opening", "read-only false", "read 99", "store ok"])
        #expect(try DiskCache(directory: directory.url).contains("from-child"))
    }

    @Test("a directory the process cannot write: reads still work, stores are typed errors")
    func unwritableDirectory() async throws {
        let directory = try TemporaryDirectory("readonly")
        do {
            let cache = try DiskCache(directory: directory.url)
            try cache.store(Data(repeating: 3, count: 321), for: "kept")
            cache.close()
        }
        // Readable by everyone, writable by its owner only; the child drops root to "nobody", or
        // runs as a user who is not the owner when the tests are not run as root.
        chmod(directory.path, getuid() == 0 ? 0o755 : 0o555)
        let reader = try ChildProcess(child, ["read-only", directory.path, "kept"])
        try await reader.waitForExit()
        chmod(directory.path, 0o755)
        #expect(reader.lines == ["read-only true", "read 321", "store failed cacheIO"])
    }

    @Test("a full disk (a file-size limit): failed stores are typed errors and the cache keeps what it has")
    func fileSizeLimit() async throws {
        let directory = try TemporaryDirectory("full")
        let writer = try ChildProcess(child, ["file-size-limit", directory.path, "12000", "120"])
        let exit = try await writer.waitForExit()
        #expect(exit.status == 0 && !exit.signaled)
        let errors = writer.lines.filter { $0.hasPrefix("error ") }
        #expect(!errors.isEmpty, "some stores must hit the limit")
        #expect(errors.allSatisfy { $0.hasSuffix(" cacheIO") })
        let summary = try #require(writer.lines.last)
        let numbers = summary.split(separator: " ").compactMap { Int($0) }
        #expect(numbers.count == 3 && numbers[0] > 0)
        #expect(numbers[0] == numbers[1], "every stored entry reads back intact: \(summary)")
        #expect(numbers[0] == numbers[2], "the index holds exactly the stored entries: \(summary)")
        let reopened = try DiskCache(directory: directory.url, configuration: DiskCacheConfiguration(sizeLimit: 0))
        #expect(reopened.count == numbers[0])
    }
}
