import Foundation
import Testing
import WebImageTesting
import WebImageTestSupport

/// Several lists read as one, as img2dataset's `url_list` takes a folder of files or a list of
/// them (its `reader.py` globs `*.INPUT_FORMAT` and reads the files in order): the rows follow each
/// other, so shards and keys run on from one list to the next.
@Suite("prefetch over several lists")
struct DatasetListsTests {
    @Test("a folder's lists of the format, in name order (gzip too), and the same lists as repeated -i or a Python list: one dataset")
    func folderAndRepeatedInputs() async throws {
        let origin = try await OriginServer.start()
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))
        for index in 0..<6 { origin.route("/f\(index).jpg", .ok(jpeg, contentType: "image/jpeg")) }
        let workspace = try CommandWorkspace()
        let folder = workspace.path("lists")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        func csv(_ rows: Range<Int>) -> String {
            "url,caption\n" + rows.map { "\(origin.url("/f\($0).jpg").absoluteString),row \($0)\n" }.joined()
        }
        try csv(0..<3).write(toFile: "\(folder)/a.csv", atomically: true, encoding: .utf8)
        try csv(3..<6).write(toFile: "\(folder)/b.csv.txt", atomically: true, encoding: .utf8)
        let gzip = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", "gzip -c '\(folder)/b.csv.txt' > '\(folder)/b.csv.gz'"])
        #expect(try await gzip.waitForExit().status == 0)
        // Not lists of the format: another extension, a hidden file.
        try FileManager.default.removeItem(atPath: "\(folder)/b.csv.txt")
        try "notes".write(toFile: "\(folder)/README.md", atomically: true, encoding: .utf8)
        try "url\nhttp://127.0.0.1:9/hidden.jpg\n".write(toFile: "\(folder)/.hidden.csv", atomically: true, encoding: .utf8)
        let common = ["--input-format", "csv", "--caption-col", "caption", "--output-format", "files", "--shard-size", "4", "--json"]

        let fromFolder = try await workspace.run(["prefetch", "-i", folder, "-o", workspace.path("one")] + common)
        #expect(fromFolder.status == 0 && fromFolder.json["succeeded"] as? Int == 6, "\(fromFolder.standardError)")
        // img2dataset's keys for 4 rows a shard: shard * 10 + place, in 1 + 5 digits.
        func caption(_ name: String, row: Int) throws -> String {
            try String(
                contentsOfFile: workspace.path(String(format: "%@/%05d/%06d.txt", name, row / 4, row / 4 * 10 + row % 4)), encoding: .utf8)
        }
        let captions = try (0..<6).map { try caption("one", row: $0) }
        #expect(captions == (0..<6).map { "row \($0)" }, "a.csv's rows, then b.csv.gz's, keys running on across the two")

        let repeated = try await workspace.run(
            ["prefetch", "-i", "\(folder)/a.csv", "-i", "\(folder)/b.csv.gz", "-o", workspace.path("two")] + common)
        let fire = try await workspace.run(
            ["prefetch", "--url_list", #"["\#(folder)/a.csv", "\#(folder)/b.csv.gz"]"#, "--output_folder", workspace.path("three")]
                + common)
        for run in [repeated, fire] { #expect(run.status == 0 && run.json["succeeded"] as? Int == 6, "\(run.standardError)") }
        for name in ["two", "three"] {
            #expect(try (0..<6).map { try caption(name, row: $0) } == captions, "the same keys as from the folder")
        }
        let counted = try await workspace.run(["prefetch", "-i", folder, "-i", "\(folder)/a.csv", "--input-format", "csv", "--count-rows"])
        #expect(counted.lines == ["9 rows"], "\(counted.standardError)")
        try await origin.shutdown()
    }

    @Test("a folder with no list of the format, standard input beside a file, and a broken second list: each refused, named")
    func refusals() async throws {
        let workspace = try CommandWorkspace()
        let folder = workspace.path("empty")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "x".write(toFile: "\(folder)/list.tsv", atomically: true, encoding: .utf8)
        let empty = try await workspace.run(["prefetch", "-i", folder, "--input-format", "csv", "-o", workspace.path("o")])
        #expect(empty.status == 1 && empty.standardError.contains("holds no .csv list"), "\(empty.standardError)")
        try "url\nhttp://127.0.0.1:9/a.jpg\n".write(toFile: workspace.path("good.csv"), atomically: true, encoding: .utf8)
        let beside = try await workspace.run(["prefetch", "-i", "-", "-i", workspace.path("good.csv")])
        #expect(beside.status == 2 && beside.standardError.contains("standard input"), "\(beside.standardError)")
        try "link\nhttp://127.0.0.1:9/b.jpg\n".write(toFile: workspace.path("other.csv"), atomically: true, encoding: .utf8)
        let broken = try await workspace.run(
            ["prefetch", "-i", workspace.path("good.csv"), "-i", workspace.path("other.csv"), "--input-format", "csv", "--count-rows"])
        #expect(broken.status == 1 && broken.standardError.contains("other.csv: "), "\(broken.standardError)")
    }
}
