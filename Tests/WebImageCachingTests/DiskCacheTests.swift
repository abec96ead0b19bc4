import Foundation
import MetricsTestKit
import Testing
import WebImageTesting
@testable import WebImage
@testable import WebImageCaching
import WebImageTestSupport

/// How a test's entries are stored: each a file, or packed into segments.
enum DiskLayout: String, CaseIterable, CustomTestStringConvertible {
    case files
    case packed

    var testDescription: String { rawValue }

    func apply(_ configuration: DiskCacheConfiguration) -> DiskCacheConfiguration {
        var configuration = configuration
        configuration.packedEntryLimit = self == .files ? 0 : 32 * 1024
        return configuration
    }

    /// The bytes an entry takes beyond its own: a packed frame's header.
    var overhead: Int { self == .files ? 0 : DiskCacheSegments.headerSize }
}

@Suite("DiskCache")
struct DiskCacheTests {
    private func open(
        _ directory: TemporaryDirectory, _ layout: DiskLayout = .files, _ configuration: DiskCacheConfiguration = DiskCacheConfiguration()
    ) throws -> DiskCache {
        try DiskCache(directory: directory.url, configuration: layout.apply(configuration))
    }

    private func bytes(_ count: Int, seed: UInt8 = 1) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0) &+ seed })
    }

    /// Files in the fan-out folders, with their sizes.
    private func entryFiles(_ directory: TemporaryDirectory) -> [String: Int] {
        var files: [String: Int] = [:]
        for relative in directory.files() where relative.count > 3 && FileID.isHexByte(String(relative.prefix(2))) {
            files[relative] = (try? FileManager.default.attributesOfItem(atPath: directory.path + "/" + relative)[.size] as? Int) ?? -1
        }
        return files
    }

    /// The index and the disk name exactly the same entries with the same sizes: a file for each
    /// file entry, a live frame of the right ID and size for each packed one; and the disk usage
    /// the cache counts is what the files and segments take.
    private func expectIndexAgreesWithFiles(
        _ cache: DiskCache, _ directory: TemporaryDirectory, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let entries = cache.entries()
        let files = Dictionary(uniqueKeysWithValues: entries.filter { !$0.isPacked }.map { ($0.folderName + "/" + $0.fileName, $0.size) })
        #expect(files == entryFiles(directory), sourceLocation: sourceLocation)
        var segments: [UInt32: [UInt8]] = [:]
        for entry in entries {
            guard let location = entry.location else { continue }
            if segments[location.segment] == nil {
                segments[location.segment] = (try? FileSystem.contents(of: segmentPath(directory, location.segment))) ?? []
            }
            let bytes = segments[location.segment]!
            let header = DiskCacheSegments.header(in: bytes, at: location.offset)
            #expect(
                header?.isLive == true && header?.frame.id == entry.fileID && header?.frame.size == entry.size,
                sourceLocation: sourceLocation)
            #expect(location.offset + entry.storedSize <= bytes.count, sourceLocation: sourceLocation)
        }
        #expect(cache.totalSize == entries.reduce(0) { $0 + $1.storedSize }, sourceLocation: sourceLocation)
        let onDisk = files.values.reduce(0, +) + segmentFiles(directory).values.reduce(0, +)
        #expect(cache.diskUsage == onDisk, sourceLocation: sourceLocation)
    }

    private func segmentPath(_ directory: TemporaryDirectory, _ number: UInt32) -> String {
        DiskCacheSegments(root: directory.path, capacity: 0, writable: false).path(of: number)
    }

    /// The segment files, with their sizes.
    private func segmentFiles(_ directory: TemporaryDirectory) -> [String: Int] {
        var files: [String: Int] = [:]
        for name in FileSystem.names(in: directory.path + "/segments") {
            files[name] = FileSystem.fileInfo(directory.path + "/segments/" + name)?.size ?? -1
        }
        return files
    }

    @Test("stores, reads, describes and removes entries")
    func roundTrip() throws {
        let directory = try TemporaryDirectory()
        let cache = try open(directory)
        let key = "https://example.com/images/cat.PNG?size=large"
        let metadata = DiskCacheMetadata(
            contentType: "image/png", etag: "\"v1\"", lastModified: "Wed, 21 Oct 2026 07:28:00 GMT", extendedData: Data([9, 8, 7]))
        try cache.store(bytes(1000), for: key, metadata: metadata)
        #expect(try cache.data(for: key) == bytes(1000))
        #expect(cache.metadata(for: key) == metadata)
        #expect(cache.contains(key))
        #expect(cache.count == 1)
        #expect(cache.totalSize == 1000)
        let path = cache.path(for: key)
        #expect(path.lastPathComponent.hasSuffix(".png"))
        #expect(path.lastPathComponent.count == 64 + 4)
        #expect(path.deletingLastPathComponent().lastPathComponent == String(path.lastPathComponent.prefix(2)))
        #expect(FileManager.default.fileExists(atPath: path.path))
        #expect(cache.entries().map(\.key) == [key])
        try cache.store(Data(), for: "empty")
        #expect(try cache.data(for: "empty") == Data())
        #expect(cache.entries().allSatisfy { !$0.isPacked }, "packedEntryLimit 0 packs nothing, not even an empty entry")
        try cache.remove("empty")
        try cache.remove(key)
        #expect(try cache.data(for: key) == nil)
        #expect(!FileManager.default.fileExists(atPath: path.path))
        #expect(cache.count == 0)
        #expect(try cache.data(for: "never stored") == nil)
    }

    @Test("the default directory follows XDG_CACHE_HOME, else ~/.cache")
    func defaultDirectory() {
        #expect(
            DiskCache.defaultDirectory(namespace: "n", environment: ["XDG_CACHE_HOME": "/var/cache/me"]).path == "/var/cache/me/webimage/n")
        let fallback = DiskCache.defaultDirectory(environment: [:])
        #expect(fallback.path.hasSuffix("/.cache/webimage/default"))
    }

    @Test("only short alphanumeric extensions are kept in file names")
    func fileExtensions() {
        #expect(DiskCache.safeExtension(of: "https://x.com/a.JPEG?x=1.png") == "jpeg")
        #expect(DiskCache.safeExtension(of: "https://x.com/a.webp#frag.gif") == "webp")
        #expect(DiskCache.safeExtension(of: "https://x.com/a.toolongext") == nil)
        #expect(DiskCache.safeExtension(of: "https://x.com/a.p/ng") == nil)
        #expect(DiskCache.safeExtension(of: "../../etc/passwd") == nil)
        #expect(DiskCache.safeExtension(of: "a.p$g") == nil)
        #expect(DiskCache.safeExtension(of: "x.com/dir.d/file") == nil)
    }

    @Test("replacing a key keeps one entry with the new bytes and metadata", arguments: DiskLayout.allCases)
    func replace(layout: DiskLayout) throws {
        let directory = try TemporaryDirectory()
        let cache = try open(directory, layout)
        try cache.store(bytes(100), for: "k", metadata: DiskCacheMetadata(etag: "a"))
        try cache.store(bytes(300, seed: 7), for: "k", metadata: DiskCacheMetadata(etag: "b"))
        #expect(try cache.data(for: "k") == bytes(300, seed: 7))
        #expect(cache.metadata(for: "k")?.etag == "b")
        #expect(cache.count == 1 && cache.totalSize == 300 + layout.overhead)
        expectIndexAgreesWithFiles(cache, directory)
    }

    @Test("an entry that grows past the packing limit becomes a file, and a file that shrinks is packed")
    func crossingThePackingLimit() throws {
        let directory = try TemporaryDirectory()
        let cache = try open(directory, .packed)
        let large = bytes(40 * 1024)
        try cache.store(bytes(500), for: "k")
        #expect(cache.entries().map(\.isPacked) == [true])
        try cache.store(large, for: "k")
        #expect(cache.entries().map(\.isPacked) == [false])
        #expect(try cache.data(for: "k") == large)
        expectIndexAgreesWithFiles(cache, directory)
        try cache.store(bytes(700, seed: 3), for: "k")
        #expect(cache.entries().map(\.isPacked) == [true])
        #expect(entryFiles(directory).isEmpty, "the file version is gone")
        #expect(try cache.data(for: "k") == bytes(700, seed: 3))
        cache.close()
        let reopened = try open(directory, .packed)
        #expect(try reopened.data(for: "k") == bytes(700, seed: 3))
        #expect(reopened.count == 1)
        expectIndexAgreesWithFiles(reopened, directory)
    }

    @Test("retained response headers survive a reopen, with freshness and without; an entry with neither stays as before")
    func retainedHeaders() throws {
        let directory = try TemporaryDirectory()
        var plain = DiskCacheMetadata(etag: "a")
        plain.retainedHeaders = ["x-robots-tag": ["noai", "otherbot: noindex"]]
        var fresh = plain
        fresh.freshness = HTTPFreshness(
            cacheControl: "max-age=60", expires: nil, date: nil, age: nil, lastModified: nil, receivedAt: Date(timeIntervalSince1970: 1000))
        do {
            let cache = try open(directory)
            try cache.store(bytes(10), for: "headers", metadata: plain)
            try cache.store(bytes(11), for: "both", metadata: fresh)
            try cache.store(bytes(12), for: "neither", metadata: DiskCacheMetadata(etag: "c"))
            cache.close()
        }
        let reopened = try open(directory)
        #expect(reopened.metadata(for: "headers") == plain, "no freshness: the NaN stand-in reads back as none")
        #expect(reopened.metadata(for: "both") == fresh)
        #expect(reopened.metadata(for: "neither") == DiskCacheMetadata(etag: "c"))
    }

    @Test("the index, its metadata and its recency order survive a reopen", arguments: DiskLayout.allCases)
    func reopen(layout: DiskLayout) throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try open(directory, layout)
            for index in 0..<20 {
                try cache.store(
                    bytes(100 + index), for: "key-\(index)",
                    metadata: DiskCacheMetadata(etag: "\(index)", extendedData: Data([UInt8(index)])))
            }
            _ = try cache.data(for: "key-3")
            try cache.remove("key-5")
            cache.close()
        }
        let reopened = try open(directory, layout)
        #expect(reopened.count == 19)
        #expect(reopened.entries().last?.key == "key-3", "reading key-3 made it the most recently used")
        #expect(reopened.entries().first?.key == "key-0")
        #expect(try reopened.data(for: "key-7") == bytes(107))
        #expect(reopened.metadata(for: "key-7") == DiskCacheMetadata(etag: "7", extendedData: Data([7])))
        #expect(try reopened.data(for: "key-5") == nil)
        expectIndexAgreesWithFiles(reopened, directory)
    }

    @Test(
        "the size limit holds after every store, evicting least recently used down to the low-water mark",
        arguments: DiskLayout.allCases)
    func sizeLimit(layout: DiskLayout) throws {
        let directory = try TemporaryDirectory()
        let cache = try open(directory, layout, DiskCacheConfiguration(sizeLimit: 10_000))
        let entrySize = 1000 - layout.overhead
        for index in 0..<10 { try cache.store(bytes(entrySize), for: "k\(index)") }
        _ = try cache.data(for: "k0")
        try cache.store(bytes(entrySize), for: "k10")
        #expect(cache.totalSize == 8000, "down to 80% of the limit")
        #expect(cache.diskUsage <= 10_000, "evicted frames were compacted away")
        #expect(cache.contains("k0"), "k0 was used recently")
        #expect(!cache.contains("k1") && !cache.contains("k2") && !cache.contains("k3"))
        for index in 11..<60 {
            try cache.store(bytes(500 + index * 13), for: "k\(index)")
            #expect(cache.diskUsage <= 10_000)
        }
        expectIndexAgreesWithFiles(cache, directory)
    }

    @Test("the count limit holds after every store", arguments: DiskLayout.allCases)
    func countLimit(layout: DiskLayout) throws {
        let directory = try TemporaryDirectory()
        let cache = try open(directory, layout, DiskCacheConfiguration(countLimit: 10))
        for index in 0..<35 {
            try cache.store(bytes(10), for: "k\(index)")
            #expect(cache.count <= 10)
        }
        expectIndexAgreesWithFiles(cache, directory)
    }

    @Test("an entry larger than the size limit is refused and its stale version removed", arguments: DiskLayout.allCases)
    func tooLarge(layout: DiskLayout) throws {
        let directory = try TemporaryDirectory()
        let cache = try open(directory, layout, DiskCacheConfiguration(sizeLimit: 1000))
        try cache.store(bytes(10), for: "k")
        #expect(throws: WebImageError(.tooLarge)) { try cache.store(bytes(1001), for: "k") }
        #expect(try cache.data(for: "k") == nil)
        #expect(entryFiles(directory).isEmpty)
        expectIndexAgreesWithFiles(cache, directory)
    }

    @Test("an entry above the low-water mark but within the limit is kept, alone", arguments: DiskLayout.allCases)
    func largeButAllowed(layout: DiskLayout) throws {
        let directory = try TemporaryDirectory()
        let cache = try open(directory, layout, DiskCacheConfiguration(sizeLimit: 1000))
        try cache.store(bytes(300), for: "a")
        try cache.store(bytes(900), for: "b")
        #expect(cache.entries().map(\.key) == ["b"])
        #expect(cache.diskUsage <= 1000)
    }

    @Test("ages count from the last access or from creation, and expiry dates end entries")
    func expiry() throws {
        let directory = try TemporaryDirectory()
        let clock = Locked(Date(timeIntervalSince1970: 1_000_000))
        let now: @Sendable () -> Date = { clock.withLock { $0 } }
        func advance(_ seconds: Double) { clock.withLock { $0 += seconds } }
        let hour = Duration.seconds(3600)

        let byAccess = try DiskCache(
            directory: directory.url.appendingPathComponent("by-access"),
            configuration: DiskCacheConfiguration(maximumAge: hour), telemetry: .default, now: now)
        try byAccess.store(bytes(10), for: "a")
        advance(3000)
        #expect(try byAccess.data(for: "a") != nil, "50 minutes old")
        advance(3000)
        #expect(try byAccess.data(for: "a") != nil, "read 50 minutes ago")
        advance(3700)
        #expect(try byAccess.data(for: "a") == nil, "unread for over an hour")
        #expect(byAccess.count == 0)

        let byCreation = try DiskCache(
            directory: directory.url.appendingPathComponent("by-creation"),
            configuration: DiskCacheConfiguration(maximumAge: hour, agePolicy: .sinceCreation), telemetry: .default, now: now)
        try byCreation.store(bytes(10), for: "a")
        try byCreation.store(bytes(10), for: "b", metadata: DiskCacheMetadata(expires: now().addingTimeInterval(60)))
        advance(3000)
        #expect(try byCreation.data(for: "a") != nil)
        #expect(!byCreation.contains("b"), "past its own expiry date")
        advance(700)
        #expect(!byCreation.contains("a"), "created over an hour ago, though read since")
        try byCreation.removeExpired()
        #expect(byCreation.count == 0)
        #expect(entryFiles(directory).isEmpty)
    }

    @Test("an entry whose file vanished or changed size is dropped, never served")
    func damagedFiles() throws {
        let directory = try TemporaryDirectory()
        let cache = try open(directory)
        try cache.store(bytes(100), for: "gone")
        try cache.store(bytes(100), for: "short")
        try FileManager.default.removeItem(at: cache.path(for: "gone"))
        try Data(bytes(50)).write(to: cache.path(for: "short"))
        #expect(try cache.data(for: "gone") == nil)
        #expect(try cache.data(for: "short") == nil)
        #expect(cache.count == 0)
    }

    @Test("a packed entry whose frame is damaged, cut short or gone is dropped, never served")
    func damagedSegments() throws {
        let directory = try TemporaryDirectory()
        let cache = try open(directory, .packed)
        for index in 0..<4 { try cache.store(bytes(300, seed: UInt8(index)), for: "k\(index)") }
        let location = try #require(cache.entry(for: "k1")?.location)
        let path = segmentPath(directory, location.segment)
        var content = try #require(try FileSystem.contents(of: path))
        content[location.offset + DiskCacheSegments.headerSize + 10] ^= 0xFF
        try Data(content).write(to: URL(fileURLWithPath: path))
        #expect(try cache.data(for: "k1") == nil, "a flipped byte fails the checksum")
        #expect(!cache.contains("k1"))
        #expect(try cache.data(for: "k0") == bytes(300, seed: 0))
        cache.close()

        let lastOffset = try #require(try open(directory, .packed).entry(for: "k3")?.location?.offset)
        try FileHandle(forWritingTo: URL(fileURLWithPath: path)).truncate(atOffset: UInt64(lastOffset + 100))
        let reopened = try open(directory, .packed)
        #expect(!reopened.contains("k3"), "a frame past the end of its segment is dropped at open")
        #expect(try reopened.data(for: "k2") == bytes(300, seed: 2))
        expectIndexAgreesWithFiles(reopened, directory)
        reopened.close()
        try FileManager.default.removeItem(atPath: path)
        let withoutSegment = try open(directory, .packed)
        #expect(withoutSegment.count == 0, "entries of a deleted segment are dropped at open")
        #expect(try withoutSegment.data(for: "k0") == nil)
    }

    @Test("bytes a crash left after the last frame are cut away at open, and stores go on")
    func orphanedFrameTail() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try open(directory, .packed)
            for index in 0..<5 { try cache.store(bytes(200 + index), for: "k\(index)") }
            cache.close()
        }
        let segment = try #require(segmentFiles(directory).keys.first)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory.path + "/segments/" + segment))
        try handle.seekToEnd()
        // A frame written before its journal record, and the crash before the record.
        try handle.write(contentsOf: Data("WIPK".utf8) + Data(repeating: 7, count: 80))
        try handle.close()
        let reopened = try open(directory, .packed)
        #expect(reopened.count == 5)
        expectIndexAgreesWithFiles(reopened, directory)
        try reopened.store(bytes(321), for: "after")
        reopened.close()
        let again = try open(directory, .packed)
        #expect(try again.data(for: "after") == bytes(321))
        for index in 0..<5 { #expect(try again.data(for: "k\(index)") == bytes(200 + index)) }
        expectIndexAgreesWithFiles(again, directory)
    }

    @Test("removed and replaced frames are marked dead: a reader holding an older index skips them")
    func deadFramesForOlderReaders() throws {
        let directory = try TemporaryDirectory()
        let owner = try open(directory, .packed)
        for index in 0..<3 { try owner.store(bytes(100), for: "k\(index)") }
        let reader = try DiskCache(
            directory: directory.url, configuration: DiskCacheConfiguration(), telemetry: .default, readOnly: true, now: { Date() })
        #expect(reader.isReadOnly && reader.count == 3)
        try owner.remove("k0")
        try owner.store(bytes(150, seed: 9), for: "k1")
        #expect(try reader.data(for: "k0") == nil, "removed since the reader opened")
        #expect(try reader.data(for: "k1") == nil, "its frame was replaced; the reader's index points to the old one")
        #expect(try reader.data(for: "k2") == bytes(100))
        #expect(try owner.data(for: "k1") == bytes(150, seed: 9))
    }

    @Test("segments that become half waste are compacted: their live entries move, the file goes, and a reopen finds every entry")
    func segmentCompaction() throws {
        let directory = try TemporaryDirectory()
        // A 2 MiB limit makes 256 KiB segments: 120 entries of 2 KiB to a segment.
        let configuration = DiskCacheConfiguration(sizeLimit: 2 * 1024 * 1024)
        let cache = try open(directory, .packed, configuration)
        for index in 0..<600 { try cache.store(bytes(2048, seed: UInt8(index % 251)), for: "k\(index)") }
        let firstSegment = try #require(cache.entry(for: "k0")?.location?.segment)
        let inFirst = (0..<600).filter { cache.entry(for: "k\($0)")?.location?.segment == firstSegment }
        #expect(inFirst.count > 100)
        for index in inFirst.prefix(inFirst.count * 2 / 3) { try cache.remove("k\(index)") }
        #expect(!FileManager.default.fileExists(atPath: segmentPath(directory, firstSegment)), "the half-waste segment is deleted")
        #expect(cache.entries().allSatisfy { $0.location?.segment != firstSegment }, "the survivors moved out")
        #expect(cache.diskUsage < cache.totalSize + 2 * 1024 * 1024 / 16, "waste stays under half a segment's worth")
        for index in inFirst.suffix(inFirst.count - inFirst.count * 2 / 3) {
            #expect(try cache.data(for: "k\(index)") == bytes(2048, seed: UInt8(index % 251)))
        }
        expectIndexAgreesWithFiles(cache, directory)
        let count = cache.count
        cache.close()
        let reopened = try open(directory, .packed, configuration)
        #expect(reopened.count == count)
        for entry in reopened.entries() {
            let key = try #require(entry.key)
            let index = try #require(Int(key.dropFirst()))
            #expect(try reopened.data(for: key) == bytes(2048, seed: UInt8(index % 251)))
        }
        expectIndexAgreesWithFiles(reopened, directory)
    }

    @Test("a torn record at the end of the journal is cut away")
    func tornJournalTail() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try open(directory)
            for index in 0..<5 { try cache.store(bytes(10 + index), for: "k\(index)") }
            cache.close()
        }
        let journal = directory.url.appendingPathComponent("journal")
        let handle = try FileHandle(forWritingTo: journal)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([200, 0, 0, 0, UInt8(ascii: "B"), 1, 2, 3]))
        try handle.close()
        let reopened = try open(directory)
        #expect(reopened.count == 5)
        #expect(reopened.entries().allSatisfy { $0.key != nil })
        try reopened.store(bytes(5), for: "after")
        reopened.close()
        #expect(try open(directory).count == 6, "appends after the cut are read back")
    }

    @Test("a broken or missing journal is rebuilt by one scan: data survives, keys do not", arguments: DiskLayout.allCases)
    func brokenJournal(layout: DiskLayout) throws {
        for damage in ["corrupt", "missing"] {
            let directory = try TemporaryDirectory()
            do {
                let cache = try open(directory, layout)
                for index in 0..<5 { try cache.store(bytes(100 + index), for: "k\(index)") }
                cache.close()
            }
            let journal = directory.url.appendingPathComponent("journal")
            if damage == "missing" {
                try FileManager.default.removeItem(at: journal)
            } else {
                var content = try Data(contentsOf: journal)
                content[20] ^= 0xFF
                try content.write(to: journal)
            }
            let rebuilt = try open(directory, layout)
            #expect(rebuilt.count == 5, "\(damage)")
            #expect(rebuilt.entries().allSatisfy { $0.key == nil })
            #expect(try rebuilt.data(for: "k3") == bytes(103), "found by the hash of its key")
            expectIndexAgreesWithFiles(rebuilt, directory)
        }
    }

    @Test("hostile keys stay inside the directory and round-trip", arguments: DiskLayout.allCases)
    func hostileKeys(layout: DiskLayout) throws {
        let parent = try TemporaryDirectory()
        let directoryURL = parent.url.appendingPathComponent("cache")
        let keys = [
            "../../etc/passwd", "/absolute/../../x", String(repeating: "k", count: 10_240), "nul\u{0}byte\u{0}",
            String(decoding: [0xFF, 0xFE, 0x2E, 0x2E, 0x2F, 0xC3], as: UTF8.self), "", "{}%00\\..\\..",
        ]
        do {
            let cache = try DiskCache(directory: directoryURL, configuration: layout.apply(DiskCacheConfiguration()))
            for (index, key) in keys.enumerated() { try cache.store(bytes(10 + index), for: key) }
            for (index, key) in keys.enumerated() { #expect(try cache.data(for: key) == bytes(10 + index)) }
            cache.close()
        }
        let reopened = try DiskCache(directory: directoryURL, configuration: layout.apply(DiskCacheConfiguration()))
        for (index, key) in keys.enumerated() { #expect(try reopened.data(for: key) == bytes(10 + index)) }
        #expect(Set(reopened.entries().compactMap(\.key)) == Set(keys))
        #expect(parent.files().allSatisfy { $0.hasPrefix("cache/") }, "nothing outside the cache directory")
    }

    @Test("extra read-only directories are searched after a miss", arguments: DiskLayout.allCases)
    func readOnlyDirectories(layout: DiskLayout) throws {
        let shipped = try TemporaryDirectory("shipped")
        do {
            let seed = try open(shipped, layout)
            try seed.store(bytes(42), for: "https://x.com/bundled.png")
            seed.close()
        }
        let directory = try TemporaryDirectory()
        let cache = try open(directory, layout, DiskCacheConfiguration(readOnlyDirectories: [shipped.url]))
        #expect(try cache.data(for: "https://x.com/bundled.png") == bytes(42))
        #expect(!cache.contains("https://x.com/bundled.png"), "read-only hits are not copied in")
        #expect(!cache.isCertainMiss("https://x.com/bundled.png"), "with read-only directories, only a read can tell")
        #expect(try cache.data(for: "https://x.com/other.png") == nil)
    }

    @Test("a key the index lacks or holds expired is a certain miss, counted as a lookup's miss; a stored one is not")
    func certainMisses() throws {
        let metrics = TestMetrics()
        let directory = try TemporaryDirectory()
        let clock = Locked(Date(timeIntervalSince1970: 1_000_000))
        let cache = try DiskCache(
            directory: directory.url, configuration: DiskCacheConfiguration(maximumAge: .seconds(60)),
            telemetry: Telemetry(metricsFactory: metrics), now: { clock.withLock { $0 } })
        try cache.store(bytes(10), for: "kept")
        #expect(cache.isCertainMiss("absent"))
        #expect(!cache.isCertainMiss("kept"))
        #expect(try metrics.expectCounter("webimage_disk_cache_lookups_total", [("result", "miss")]).totalValue == 1)
        clock.withLock { $0 += 61 }
        #expect(cache.isCertainMiss("kept"), "an expired entry is a miss")
        #expect(try metrics.expectCounter("webimage_disk_cache_lookups_total", [("result", "miss")]).totalValue == 2)
    }

    @Test("removeAll empties the cache and its directory", arguments: DiskLayout.allCases)
    func removeAll(layout: DiskLayout) throws {
        let directory = try TemporaryDirectory()
        let cache = try open(directory, layout)
        for index in 0..<10 { try cache.store(bytes(10), for: "k\(index)") }
        try cache.removeAll()
        #expect(cache.count == 0 && cache.totalSize == 0 && cache.diskUsage == 0)
        #expect(entryFiles(directory).isEmpty && segmentFiles(directory).isEmpty)
        try cache.store(bytes(10), for: "again")
        cache.close()
        #expect(try open(directory, layout).entries().map(\.key) == ["again"])
    }

    @Test("a cache whose directory is deleted keeps working and starts over", arguments: DiskLayout.allCases)
    func directoryDeleted(layout: DiskLayout) throws {
        let directory = try TemporaryDirectory()
        let cache = try open(directory, layout)
        try cache.store(bytes(10), for: "old")
        try FileManager.default.removeItem(at: directory.url)
        #expect(try cache.data(for: "old") == nil)
        try cache.store(bytes(20), for: "new")
        #expect(try cache.data(for: "new") == bytes(20))
        #expect(cache.count == 1)
        cache.close()
        #expect(try open(directory, layout).entries().map(\.key) == ["new"])
    }

    @Test("the journal is compacted once it holds more than twice the live entries", arguments: DiskLayout.allCases)
    func compaction(layout: DiskLayout) throws {
        let directory = try TemporaryDirectory()
        let cache = try open(directory, layout, DiskCacheConfiguration(compactionThreshold: 50))
        for round in 0..<20 {
            for index in 0..<10 { try cache.store(bytes(10 + round), for: "k\(index)") }
        }
        cache.close()
        let journalSize = try FileManager.default.attributesOfItem(atPath: directory.path + "/journal")[.size] as? Int ?? 0
        // 400 records (about 43 KB) without compaction; at most 50 records (under 10 KB) with it.
        #expect(journalSize < 10_000)
        let reopened = try open(directory, layout)
        #expect(reopened.count == 10)
        #expect(try reopened.data(for: "k4") == bytes(29))
    }

    @Test("8 tasks of random stores, reads and removes: the limits hold at every observation", arguments: DiskLayout.allCases)
    func concurrentLimits(layout: DiskLayout) async throws {
        let directory = try TemporaryDirectory()
        let cache = try open(directory, layout, DiskCacheConfiguration(sizeLimit: 64 * 1024, countLimit: 60, compactionThreshold: 200))
        // Eight threads of their own, not tasks: blocking file I/O on the cooperative pool would
        // starve every other test that awaits in the meantime.
        let violations = Locked(0)
        let failures = Locked<[WebImageError]>([])
        // 200 keys over a 60-entry limit: the cache is full and evicting within the first hundred
        // operations, so a few hundred per thread cross every path many times; the sanitizers,
        // which see races by ordering rather than by volume, get fewer (this test took 114 s of
        // CI's ThreadSanitizer run at 2,500).
        let rounds = Sanitizer.isActive ? 250 : 800
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: 8) { worker in
                    var generator = SplitMix64(seed: UInt64(worker) + 100)
                    for _ in 0..<rounds {
                        let key = "k\(generator.next() % 200)"
                        do throws(WebImageError) {
                            switch generator.next() % 3 {
                            case 0: try cache.store(TestPayload.bytes(Int(generator.next() % 50)).prefix(3000), for: key)
                            case 1: _ = try cache.data(for: key)
                            default: try cache.remove(key)
                            }
                        } catch {
                            failures.withLock { $0.append(error) }
                        }
                        if cache.diskUsage > 64 * 1024 || cache.count > 60 { violations.withLock { $0 += 1 } }
                    }
                }
                finished.resume()
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let violationCount = violations.withLock { $0 }
        #expect(violationCount == 0)
        expectIndexAgreesWithFiles(cache, directory)
        cache.close()
        expectIndexAgreesWithFiles(try open(directory, layout, DiskCacheConfiguration(sizeLimit: 64 * 1024, countLimit: 60)), directory)
    }
}
