import Foundation
import Testing
import WebImage
import WebImageTesting

#if canImport(Glibc)
import Glibc
#endif

/// `prefetch --output-format tar`: shards of samples as img2dataset and webdataset lay them out,
/// written so that a crash never leaves a torn shard under its final name.
@Suite("prefetch --output-format tar", .serialized)
struct DatasetTests {
    private let jpeg = [UInt8](try! Fixture.data("gradient.jpg"))

    /// A member of a tar archive.
    struct Member: Equatable {
        var name: String
        var data: Data
    }

    /// Reads a ustar archive: what the writer claims to write, checked independently of it.
    static func members(ofTar path: String) throws -> [Member] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var members: [Member] = []
        var offset = 0
        while offset + 512 <= data.count {
            let header = data[offset..<offset + 512]
            if header.allSatisfy({ $0 == 0 }) { break }
            let name = String(decoding: header.prefix(100).prefix { $0 != 0 }, as: UTF8.self)
            let sizeField = String(decoding: header.dropFirst(124).prefix(11), as: UTF8.self)
            let size = try #require(Int(sizeField, radix: 8), "size field \(sizeField)")
            let stored = header.dropFirst(148).prefix(6)
            let checksum = header.enumerated().reduce(0) { $0 + ((148..<156).contains($1.offset) ? 32 : Int($1.element)) }
            #expect(Int(String(decoding: stored, as: UTF8.self), radix: 8) == checksum, "checksum of \(name)")
            #expect(String(decoding: header.dropFirst(257).prefix(5), as: UTF8.self) == "ustar")
            members.append(Member(name: name, data: data[(offset + 512)..<(offset + 512 + size)]))
            offset += 512 + (size + 511) / 512 * 512
        }
        #expect(data.count - offset >= 1024, "two zero blocks end the archive")
        return members
    }

    static func records(ofLines path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test("shards of N URLs: KEY.png and KEY.json side by side for each image, a .jsonl line for every URL, failures included")
    func shards() async throws {
        let origin = try await OriginServer.start()
        let workspace = try WebImageCommandTests.Workspace()
        var lines: [String] = []
        for index in 0..<25 {
            let path = index % 7 == 3 ? "/missing-\(index).jpg" : "/photo-\(index).jpg"
            if index % 7 != 3 { origin.route(path, .ok(jpeg, contentType: "image/jpeg")) }
            lines.append(origin.url(path).absoluteString)
        }
        lines.insert("# a comment, and a blank line, are not URLs", at: 5)
        lines.insert("", at: 9)
        try lines.joined(separator: "\n").write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
        let out = workspace.path("out")
        let run = try await workspace.run([
            "prefetch", "-i", workspace.path("urls.txt"), "-o", out, "--output-format", "tar", "--shard-size", "10",
            "--thumbnail", "32x32", "--format", "png", "--allow-failures", "--json",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.json["total"] as? Int == 25 && run.json["failed"] as? Int == 4 && run.json["succeeded"] as? Int == 21)
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(files == ["00000.jsonl", "00000.tar", "00001.jsonl", "00001.tar", "00002.jsonl", "00002.tar"])

        var keys: [String] = []
        for (shard, count) in [(0, 10), (1, 10), (2, 5)] {
            let name = String(format: "%05d", shard)
            let records = try Self.records(ofLines: "\(out)/\(name).jsonl")
            #expect(records.count == count)
            let members = try Self.members(ofTar: "\(out)/\(name).tar")
            let succeeded = records.filter { $0["status"] as? String == "success" }
            #expect(members.count == succeeded.count * 2)
            for pair in stride(from: 0, to: members.count, by: 2) {
                let (image, json) = (members[pair], members[pair + 1])
                let key = String(image.name.dropLast(4))
                #expect(image.name == key + ".png" && json.name == key + ".json", "a sample's members side by side")
                let record = try #require(try JSONSerialization.jsonObject(with: json.data) as? [String: Any])
                let decoded = try CodersManager.shared.decode(image.data)
                #expect((decoded.pixelWidth, decoded.pixelHeight) == (32, 24))
                #expect(record["width"] as? Int == 32 && record["height"] as? Int == 24)
                #expect(record["originalWidth"] as? Int == 64 && record["originalHeight"] as? Int == 48)
                #expect(record["format"] as? String == "png" && record["bytes"] as? Int == image.data.count)
                #expect(record["url"] as? String == record["finalURL"] as? String)
            }
            for failed in records where failed["status"] as? String == "failed" {
                #expect((failed["url"] as? String)?.contains("/missing-") == true)
                #expect((failed["error"] as? String)?.contains("404") == true)
            }
            keys += records.compactMap { $0["key"] as? String }
        }
        #expect(keys.sorted() == (0..<25).map { String(format: "%09d", $0) }, "a key per URL: its place in the list")

        // Python's tarfile (as webdataset and img2dataset users read shards) sees the same members.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") {
            let script = "import tarfile,sys; print('\\n'.join(tarfile.open(sys.argv[1]).getnames()))"
            let python = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, "\(out)/00001.tar"])
            #expect(try await python.waitForExit().status == 0)
            #expect(python.lines == (try Self.members(ofTar: "\(out)/00001.tar")).map(\.name))
        }
        try await origin.shutdown()
    }

    @Test("--no-cache keeps the images only in the shards; originals are checked by their header, so a page is a failure")
    func withoutCache() async throws {
        let origin = try await OriginServer.start()
        let workspace = try WebImageCommandTests.Workspace()
        let paths = (0..<5).map { "/n\($0).jpg" } + ["/page.jpg"]
        for path in paths.dropLast() { origin.route(path, .ok(jpeg, contentType: "image/jpeg")) }
        origin.route("/page.jpg", .htmlPage())
        try paths.map { origin.url($0).absoluteString }.joined(separator: "\n")
            .write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
        let arguments = [
            "prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path("out"), "--output-format", "tar", "--no-cache",
            "--allow-failures", "--json",
        ]
        let run = try await workspace.run(arguments)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.json["succeeded"] as? Int == 5 && run.json["failed"] as? Int == 1)
        let members = try Self.members(ofTar: workspace.path("out/00000.tar"))
        #expect(members.map(\.name).filter { $0.hasSuffix(".jpg") }.count == 5)
        #expect(members.first { $0.name == "000000000.jpg" }?.data == Data(jpeg), "the original bytes")
        let record = try #require(try JSONSerialization.jsonObject(with: members[1].data) as? [String: Any])
        #expect(record["width"] as? Int == 64 && record["height"] as? Int == 48 && record["format"] as? String == "jpeg")
        let failed = try Self.records(ofLines: workspace.path("out/00000.jsonl")).first { $0["status"] as? String == "failed" }
        #expect((failed?["url"] as? String)?.hasSuffix("/page.jpg") == true)
        let stats = try await workspace.run(["cache", "stats", "--json"])
        #expect(stats.json["count"] as? Int == 0, "nothing in the disk cache: \(stats.lines)")
        let again = try await workspace.run(arguments)
        #expect(again.json["skipped"] as? Int == 6)
        for path in paths { #expect(origin.requestCount(path) == 1) }
        try await origin.shutdown()
    }

    @Test("SIGKILL in the middle of a shard: no shard under its final name is torn; a rerun fetches only what is missing")
    func resumesAfterKill() async throws {
        let origin = try await OriginServer.start()
        let workspace = try WebImageCommandTests.Workspace()
        let paths = (0..<40).map { "/p\($0).jpg" }
        // 25...28 stall: with four at a time, once all four are asked for, every URL before them is done.
        let stalled = 25...28
        for (index, path) in paths.enumerated() {
            let delay: Duration = stalled.contains(index) ? .seconds(120) : .zero
            origin.route(path, OriginResponse(headers: [("Content-Type", "image/jpeg")], body: jpeg, headerDelay: delay))
        }
        try paths.map { origin.url($0).absoluteString }.joined(separator: "\n")
            .write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
        let out = workspace.path("out")
        let arguments = [
            "prefetch", "-i", workspace.path("urls.txt"), "-o", out, "--output-format", "tar", "--shard-size", "10", "-j", "4", "--json",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["WEBIMAGE_CACHE_DIR"] = workspace.cacheDirectory.path
        let first = try ChildProcess(ChildProcess.builtProduct("webimage"), arguments, environment: environment)
        for index in stalled { _ = try await origin.waitForRequests(1, to: paths[index], timeout: .seconds(60)) }
        first.kill()
        #expect(try await first.waitForExit().signaled)

        var files = Set(try FileManager.default.contentsOfDirectory(atPath: out))
        #expect(files.isSuperset(of: ["00000.tar", "00000.jsonl", "00001.tar", "00001.jsonl", "00002.tar.partial"]), "\(files)")
        #expect(!files.contains("00002.tar") && !files.contains("00003.tar"), "no torn shard under a final name")

        for (index, path) in paths.enumerated() where stalled.contains(index) {
            origin.route(path, .ok(jpeg, contentType: "image/jpeg"))
        }
        let second = try await workspace.run(arguments)
        #expect(second.status == 0, "\(second.standardError)")
        #expect(second.json["skipped"] as? Int == 20, "the URLs of the two finished shards")
        #expect(second.json["succeeded"] as? Int == 20)
        for (index, path) in paths.enumerated() {
            let expected = stalled.contains(index) ? 2 : 1
            #expect(origin.requestCount(path) == expected, "\(path): \(origin.requestCount(path)) requests")
        }
        files = Set(try FileManager.default.contentsOfDirectory(atPath: out))
        #expect(files == Set((0..<4).flatMap { ["0000\($0).tar", "0000\($0).jsonl"] }), "\(files)")
        var keys: [String] = []
        for shard in 0..<4 {
            let records = try Self.records(ofLines: "\(out)/0000\(shard).jsonl")
            #expect(records.count == 10 && records.allSatisfy { $0["status"] as? String == "success" })
            #expect(try Self.members(ofTar: "\(out)/0000\(shard).tar").count == 20)
            keys += records.compactMap { $0["key"] as? String }
        }
        #expect(keys.sorted() == (0..<40).map { String(format: "%09d", $0) })
        try await origin.shutdown()
    }

    @Test("with --shard I/N the runs' shards are numbered I, I+N, ... and merge into one dataset with every URL once")
    func slicesMerge() async throws {
        let origin = try await OriginServer.start()
        let workspace = try WebImageCommandTests.Workspace()
        let paths = (0..<30).map { "/s\($0).jpg" }
        for path in paths { origin.route(path, .ok(jpeg, contentType: "image/jpeg")) }
        try paths.map { origin.url($0).absoluteString }.joined(separator: "\n")
            .write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
        let out = workspace.path("out")
        var names: [Set<String>] = []
        for index in 0..<3 {
            let run = try await workspace.run([
                "prefetch", "-i", workspace.path("urls.txt"), "-o", out, "--output-format", "tar", "--shard-size", "4",
                "--shard", "\(index)/3", "--json",
            ])
            #expect(run.status == 0, "\(run.standardError)")
            let tars = Set(try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix(".tar") })
            names.append(tars.subtracting(names.reduce(into: Set<String>()) { $0.formUnion($1) }))
        }
        for (index, added) in names.enumerated() {
            #expect(!added.isEmpty)
            #expect(added.allSatisfy { Int($0.prefix(5))! % 3 == index }, "run \(index) wrote \(added.sorted())")
        }
        var keys: [String] = []
        for name in names.reduce(into: Set<String>(), { $0.formUnion($1) }) {
            keys += try Self.records(ofLines: "\(out)/\(name.dropLast(4)).jsonl").compactMap { $0["key"] as? String }
        }
        #expect(keys.sorted() == (0..<30).map { String(format: "%09d", $0) }, "every URL once")
        for path in paths { #expect(origin.requestCount(path) == 1) }
        try await origin.shutdown()
    }
}
