import Foundation
import Testing
import WebImage
import WebImageTesting
import WebImageTestSupport

@testable import WebImageDataset

/// Issue 57: what the attack on the crawler from outside found in `prefetch`: a hostile caption
/// list, a hostile robots.txt, an opt-out dodged through the cache. Each test failed before its fix.
@Suite("prefetch against hostile lists", .serialized)
struct ListAttackTests {
    private let jpeg = [UInt8](try! Fixture.data("gradient.jpg"))

    private func write(_ lines: [String], to path: String) throws {
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test("rows are http(s) only by default: file:, data: and s3: rows are refused before any read, each a row of its own")
    func rowSchemes() async throws {
        let origin = try await OriginServer.start()
        origin.route("/ok.jpg", .ok(jpeg, contentType: "image/jpeg"))
        let workspace = try CommandWorkspace()
        let secret = workspace.path("key.pem")
        try Data(jpeg).write(to: URL(fileURLWithPath: secret))
        let dataURL = "data:image/jpeg;base64," + Data(jpeg).base64EncodedString()
        let rows = [
            origin.url("/ok.jpg").absoluteString, "file://\(secret)", "file://localhost\(secret)", "FILE://\(secret)", dataURL,
            "s3://secret/x.jpg",
        ]
        try write(rows, to: workspace.path("urls.txt"))
        let out = workspace.path("out")
        let arguments = [
            "prefetch", "-i", workspace.path("urls.txt"), "-o", out, "--output-format", "webdataset", "--disable-all-reencoding",
            "--no-cache", "--allow-failures", "--json",
        ]
        let run = try await workspace.run(arguments)
        #expect(run.status == 0 && run.json["succeeded"] as? Int == 1 && run.json["failed"] as? Int == 5, "\(run.standardError)")
        let records = try DatasetTests.records(ofLines: out + "/00000.jsonl")
        #expect(records.count == 6, "every row has its record")
        let refused = records.filter { ($0["error_message"] as? String)?.contains("rows are not loaded") == true }
        #expect(refused.count == 5, "\(records.map { $0["error_message"] as? String ?? "-" })")
        let members = try DatasetTests.members(ofTar: out + "/00000.tar").filter { $0.name.hasSuffix(".jpg") }
        #expect(members.count == 1, "only the web row's image is in the shard")

        // Named: the schemes the run allows; a bucket only when named.
        let files = try await workspace.run(
            ["prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path("files"), "--allowed-url-schemes", "http,file", "--json"])
        #expect(files.json["succeeded"] as? Int == 4 && files.json["failed"] as? Int == 2, "\(files.standardError)")
        let usage = try await workspace.run(["prefetch", "-i", workspace.path("urls.txt"), "--allowed-url-schemes", "https,s3"])
        #expect(usage.status != 0 && usage.standardError.contains("--allowed-buckets"), "\(usage.standardError)")
        let unknown = try await workspace.run(["prefetch", "-i", workspace.path("urls.txt"), "--allowed-url-schemes", "gopher"])
        #expect(unknown.status != 0 && unknown.standardError.contains("gopher"))
        let buckets = try await workspace.run([
            "prefetch", "-i", workspace.path("urls.txt"), "--allowed-url-schemes", "http,s3", "--allowed-buckets", "public", "--json",
        ])
        #expect(buckets.standardError.contains("the bucket secret is not in --allowed-buckets"), "\(buckets.standardError)")
        #expect(origin.requestCount("/ok.jpg") >= 1)
        try await origin.shutdown()
    }

    @Test("an image an earlier run cached is judged by its X-Robots-Tag again: an opt-out is not dodged through the cache")
    func optOutFromCache() async throws {
        let origin = try await OriginServer.start()
        origin.route("/tagged.jpg", OriginResponse(headers: [("Content-Type", "image/jpeg"), ("X-Robots-Tag", "noai")], body: jpeg))
        let workspace = try CommandWorkspace()
        try write([origin.url("/tagged.jpg").absoluteString], to: workspace.path("urls.txt"))
        // A first run that asked for no directives caches the image.
        let first = try await workspace.run([
            "prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path("first"), "--output-format", "webdataset",
            "--disallowed-header-directives", "", "--json",
        ])
        #expect(first.json["succeeded"] as? Int == 1, "\(first.standardError)")
        let second = try await workspace.run([
            "prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path("second"), "--output-format", "webdataset",
            "--allow-failures",
            "--json",
        ])
        #expect(origin.requestCount("/tagged.jpg") == 1, "the second run read the cache")
        #expect(second.status == 0 && second.json["failed"] as? Int == 1, "\(second.standardError)")
        let record = try #require(try DatasetTests.records(ofLines: workspace.path("second/00000.jsonl")).first)
        #expect(record["error_message"] as? String == RobotsTag.refusal)
        // Named files from the cache are judged too.
        let named = try await workspace.run(["prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path("named"), "--json"])
        #expect(named.json["failed"] as? Int == 1 && named.standardError.contains(RobotsTag.refusal), "\(named.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.path("named")).isEmpty)
        try await origin.shutdown()
    }

    @Test("a line of megabytes is one row with a bounded error, read in linear time; the rows after it are read")
    func longRecords() async throws {
        let origin = try await OriginServer.start()
        origin.route("/ok.jpg", .ok(jpeg, contentType: "image/jpeg"))
        let workspace = try CommandWorkspace()
        let long = "http://127.0.0.1:1/" + String(repeating: "a", count: 3 << 20)
        try write([long, origin.url("/ok.jpg").absoluteString], to: workspace.path("urls.txt"))
        let csv = "url,caption\n\"\(long)\",x\n\(origin.url("/ok.jpg").absoluteString),fine\n"
        try csv.write(toFile: workspace.path("list.csv"), atomically: true, encoding: .utf8)
        for (list, format) in [("urls.txt", "txt"), ("list.csv", "csv")] {
            let out = workspace.path("out-\(format)")
            let run = try await workspace.run([
                "prefetch", "-i", workspace.path(list), "--input-format", format, "-o", out, "--output-format", "webdataset",
                "--no-cache", "--allow-failures", "--json",
            ])
            #expect(run.status == 0 && run.json["succeeded"] as? Int == 1 && run.json["failed"] as? Int == 1, "\(run.standardError)")
            let lines = try String(contentsOfFile: out + "/00000.jsonl", encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 2 && lines.allSatisfy { $0.utf8.count < 8192 }, "\(lines.map(\.utf8.count))")
            #expect(lines[0].contains("longer than the 1 MiB a record may hold"))
            let stats = try Data(contentsOf: URL(fileURLWithPath: out + "/00000_stats.json"))
            #expect(stats.count < 8192, "status_dict keys are bounded: \(stats.count)")
        }
    }

    @Test("error texts are cut to a bound, at a character's end")
    func boundedMessages() {
        #expect(DatasetJob.bounded("short") == "short")
        let cut = DatasetJob.bounded(String(repeating: "é", count: 5000))
        #expect(cut.utf8.count <= DatasetJob.maximumMessageBytes && cut.hasSuffix("…"))
    }
}
