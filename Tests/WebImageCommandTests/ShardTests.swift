import Foundation
import Testing
import WebImage
import WebImageCore
import WebImageTesting
import WebImageTestSupport

/// `prefetch --shard I/N`: N processes over the same list share it by a stable hash of each URL,
/// with no coordinator: together they take every URL once.
@Suite("prefetch --shard")
struct ShardTests {
    @Test("three processes over one list: the union is the whole list, no URL twice, and their directories merge")
    func threeProcesses() async throws {
        let origin = try await OriginServer.start()
        let png = [UInt8](try Fixture.data("gradient-rgba.png"))
        let paths = (0..<30).map { "/s\($0).png" }
        for path in paths { origin.route(path, .ok(png, contentType: "image/png")) }
        let workspace = try CommandWorkspace()
        // Shuffled differently for each run: the slices must not depend on the order of lines.
        let urls = paths.map { origin.url($0).absoluteString }
        var totals: [Int] = []
        for index in 0..<3 {
            let list = (index == 1 ? urls.reversed() : urls).joined(separator: "\n")
            try list.write(toFile: workspace.path("urls-\(index).txt"), atomically: true, encoding: .utf8)
            // The third takes its slice from a Kubernetes Indexed Job's variables instead of --shard.
            let run =
                index == 2
                ? try await workspace.run(
                    ["prefetch", "-i", workspace.path("urls-\(index).txt"), "-o", workspace.path("out"), "--json"],
                    environment: ["JOB_COMPLETION_INDEX": "2", "JOB_COMPLETIONS": "3"])
                : try await workspace.run([
                    "prefetch", "-i", workspace.path("urls-\(index).txt"), "--shard", "\(index)/3", "-o", workspace.path("out"), "--json",
                ])
            #expect(run.status == 0, "\(run.standardError)")
            totals.append(run.json["total"] as? Int ?? -1)
        }
        try await origin.shutdown()
        #expect(totals.reduce(0, +) == 30, "slices of \(totals)")
        #expect(totals.allSatisfy { $0 > 0 }, "every slice has work: \(totals)")
        for path in paths { #expect(origin.requestCount(path) == 1, "\(path) requested \(origin.requestCount(path)) times") }
        let saved = try FileManager.default.contentsOfDirectory(atPath: workspace.path("out"))
        #expect(Set(saved) == Set(paths.map { String($0.dropFirst()) }))

        let refused = try await workspace.run(["prefetch", "-i", workspace.path("urls-0.txt"), "--shard", "3/3"])
        #expect(refused.status == 2 && refused.standardError.contains("--shard"))
        let refusedIndex = try await workspace.run(
            ["prefetch", "-i", workspace.path("urls-0.txt")], environment: ["JOB_COMPLETION_INDEX": "3", "JOB_COMPLETIONS": "3"])
        #expect(refusedIndex.status == 2 && refusedIndex.standardError.contains("JOB_COMPLETION_INDEX"))
    }

    @Test("--count-rows counts a slice's rows as the run takes them, loading nothing; the slices add up to the list")
    func countRows() async throws {
        let workspace = try CommandWorkspace()
        // A CSV with a quoted line break, a header and a comment-looking URL: rows, not lines.
        let rows = (0..<25).map { "http://127.0.0.1:9/\($0).png,\"a\nb\"" }
        try (["url,caption"] + rows).joined(separator: "\n").write(toFile: workspace.path("list.csv"), atomically: true, encoding: .utf8)
        let list = ["prefetch", "-i", workspace.path("list.csv"), "--input-format", "csv", "--caption-col", "caption"]
        let whole = try await workspace.run(list + ["--count-rows", "--json"])
        #expect(whole.status == 0, "\(whole.standardError)")
        #expect(whole.json["rows"] as? Int == 25)
        var slices: [Int] = []
        for index in 0..<4 {
            let slice = try await workspace.run(list + ["--count-rows", "--json", "--shard", "\(index)/4"])
            slices.append(slice.json["rows"] as? Int ?? -1)
        }
        #expect(slices.reduce(0, +) == 25 && slices.allSatisfy { $0 < 25 }, "slices of \(slices)")
        let plain = try await workspace.run(list + ["--count-rows"])
        #expect(plain.lines == ["25 rows"])
        let fromStandardInput = try await workspace.run(["prefetch", "--count-rows"])
        #expect(fromStandardInput.status == 2 && fromStandardInput.standardError.contains("standard input"))
    }

    @Test("--version prints the package's one version (the wheel's webimage.__version__ is read from it)")
    func version() async throws {
        let run = try await CommandWorkspace().run(["--version"])
        #expect(run.status == 0 && run.lines == [WebImageRelease.version], "\(run.lines) \(run.standardError)")
    }

    @Test("URLs that share a file name get their place in the list added, alike in every shard, from a streamed list")
    func repeatedNames() async throws {
        let origin = try await OriginServer.start()
        let png = [UInt8](try Fixture.data("gradient-rgba.png"))
        let paths = ["/a/dup.png", "/other.png", "/b/dup.png", "/c/dup.png"]
        for path in paths { origin.route(path, .ok(png, contentType: "image/png")) }
        let workspace = try CommandWorkspace()
        try paths.map { origin.url($0).absoluteString }.joined(separator: "\n")
            .write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
        let whole = try await workspace.run(["prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path("whole"), "--no-cache"])
        #expect(whole.status == 0, "\(whole.standardError)")
        for shard in ["0/2", "1/2"] {
            let run = try await workspace.run([
                "prefetch", "-i", workspace.path("urls.txt"), "--shard", shard, "-o", workspace.path("merged"), "--no-cache",
            ])
            #expect(run.status == 0, "\(run.standardError)")
        }
        try await origin.shutdown()
        let expected: Set = ["dup.png", "other.png", "dup-3.png", "dup-4.png"]
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: workspace.path("whole"))) == expected)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: workspace.path("merged"))) == expected)
    }
}
