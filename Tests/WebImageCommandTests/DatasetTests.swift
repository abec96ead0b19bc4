import Foundation
import Testing
import WebImage
import WebImageTesting

@testable import WebImageDataset

#if canImport(Glibc)
import Glibc
import WebImageTestSupport
#endif

/// `prefetch --output-format files|webdataset`: shards of samples as img2dataset lays them out (its
/// `writer.py`, `downloader.py` and `logger.py` are the reference for the names, keys, fields and
/// stats checked here), written so that a crash never leaves a torn shard counted as done.
@Suite("prefetch --output-format files|webdataset (img2dataset's layouts)", .serialized)
struct DatasetTests {
    private let jpeg = [UInt8](try! Fixture.data("gradient.jpg"))

    /// A member of a tar archive.
    struct Member: Equatable {
        var name: String
        var data: Data
    }

    /// Reads a ustar archive: what the writer claims to write, checked independently of it.
    static func members(ofTar path: String) throws -> [Member] {
        try members(ofTar: try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func members(ofTar archive: Data) throws -> [Member] {
        // Indexed from zero, whatever slice the bytes came in.
        let data = Data([UInt8](archive))
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

    static func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The field names of a JSON object in the order they are written.
    static func fieldOrder(_ data: Data) throws -> [String] {
        guard case .object(let members) = try JSONParser.parse([UInt8](data)) else { return [] }
        return members.map(\.name)
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        DigestKind.sha256.hex(of: Data(bytes))
    }

    @Test(
        "a caption CSV with awkward fields into webdataset shards: KEY.jpg, KEY.txt, KEY.json side by side, img2dataset's keys, records, .jsonl and stats"
    )
    func webdataset() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        var csv = "url,caption,source\n"
        var captions: [String: String] = [:]
        for index in 0..<25 {
            let path = index % 7 == 3 ? "/missing-\(index).jpg" : "/photo-\(index).jpg"
            if index % 7 != 3 { origin.route(path, .ok(jpeg, contentType: "image/jpeg")) }
            let caption = ["a cat, on a mat \(index)", "she said \"hi\" \(index)", "two\nlines \(index)", "café ☕ 東京 \(index)"][index % 4]
            captions[origin.url(path).absoluteString] = caption
            csv += "\(origin.url(path).absoluteString),\"\(caption.replacingOccurrences(of: "\"", with: "\"\""))\",site-\(index)\n"
        }
        try csv.write(toFile: workspace.path("list.csv"), atomically: true, encoding: .utf8)
        let out = workspace.path("out")
        let run = try await workspace.run([
            "prefetch", "-i", workspace.path("list.csv"), "--input-format", "csv", "--caption-col", "caption",
            "--save-additional-columns", "source", "-o", out, "--output-format", "webdataset", "--shard-size", "10",
            "--image-size", "32", "--resize-mode", "center_crop", "--allow-failures", "--json",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.json["total"] as? Int == 25 && run.json["failed"] as? Int == 4 && run.json["succeeded"] as? Int == 21)
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(files == (0..<3).flatMap { ["0000\($0).jsonl", "0000\($0).parquet", "0000\($0).tar", "0000\($0)_stats.json"] })

        var keys: [String] = []
        for (shard, count) in [(0, 10), (1, 10), (2, 5)] {
            let name = String(format: "%05d", shard)
            let records = try Self.records(ofLines: "\(out)/\(name).jsonl")
            #expect(records.count == count)
            // The same records as the shard's Parquet table (issue 58), as img2dataset writes it.
            let table = try SampleListReader(
                path: "\(out)/\(name).parquet", format: .parquet,
                columns: ListColumns(url: "url", caption: "caption", additional: ["key", "status"]))
            var tabled: [String: String] = [:]
            while let row = try table.next() { tabled[row.columns[0].value.text ?? ""] = row.columns[1].value.text }
            #expect(tabled == Dictionary(uniqueKeysWithValues: records.map { ($0["key"] as? String ?? "", $0["status"] as? String ?? "") }))
            let members = try Self.members(ofTar: "\(out)/\(name).tar")
            let succeeded = records.filter { $0["status"] as? String == "success" }
            #expect(members.count == succeeded.count * 3)
            for index in stride(from: 0, to: members.count, by: 3) {
                let (image, text, json) = (members[index], members[index + 1], members[index + 2])
                let key = String(image.name.dropLast(4))
                #expect(
                    image.name == key + ".jpg" && text.name == key + ".txt" && json.name == key + ".json", "a sample's members side by side"
                )
                #expect(
                    try Self.fieldOrder(json.data) == [
                        "source", "caption", "url", "key", "status", "error_message", "width", "height", "original_width",
                        "original_height", "exif", "sha256",
                    ])
                let record = try Self.json(json.data)
                let decoded = try CodersManager.shared.decode(image.data)
                #expect((decoded.pixelWidth, decoded.pixelHeight) == (32, 32))
                #expect(record["width"] as? Int == 32 && record["height"] as? Int == 32)
                #expect(record["original_width"] as? Int == 64 && record["original_height"] as? Int == 48)
                #expect(record["sha256"] as? String == Self.sha256(jpeg), "the hash of the downloaded bytes")
                #expect(record["exif"] as? String == "{}", "exifread's text for a JPEG without EXIF")
                #expect(record["key"] as? String == key && record["status"] as? String == "success" && record["error_message"] is NSNull)
                let url = try #require(record["url"] as? String)
                #expect(String(decoding: text.data, as: UTF8.self) == captions[url] && record["caption"] as? String == captions[url])
                #expect((record["source"] as? String)?.hasPrefix("site-") == true)
            }
            for failed in records where failed["status"] as? String == "failed_to_download" {
                #expect((failed["url"] as? String)?.contains("/missing-") == true)
                #expect((failed["error_message"] as? String)?.contains("404") == true)
                #expect(failed["width"] is NSNull && failed["sha256"] is NSNull && failed["caption"] as? String != nil)
            }
            let stats = try Self.json(try Data(contentsOf: URL(fileURLWithPath: "\(out)/\(name)_stats.json")))
            let failures = records.count - succeeded.count
            #expect(stats["count"] as? Int == count && stats["successes"] as? Int == succeeded.count)
            #expect(stats["failed_to_download"] as? Int == failures && stats["failed_to_resize"] as? Int == 0)
            let statusDict = try #require(stats["status_dict"] as? [String: Int])
            #expect(statusDict["success"] == succeeded.count && statusDict.values.reduce(0, +) == count)
            #expect((stats["end_time"] as? Double ?? 0) >= (stats["start_time"] as? Double ?? 1) && stats["duration"] is Double)
            keys += records.compactMap { $0["key"] as? String }
        }
        // img2dataset's compute_key: shard * 10^ceil(log10(10)) + index, padded to 1 + 5 digits.
        let expectedKeys: [String] = (0..<25).map { String(format: "%06d", $0 / 10 * 10 + $0 % 10) }
        #expect(keys.sorted() == expectedKeys)

        // Python's tarfile (as webdataset and img2dataset users read shards) sees the same members.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") {
            let script = "import tarfile,sys; print('\\n'.join(tarfile.open(sys.argv[1]).getnames()))"
            let python = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, "\(out)/00001.tar"])
            #expect(try await python.waitForExit().status == 0)
            #expect(python.lines == (try Self.members(ofTar: "\(out)/00001.tar")).map(\.name))
        }
        try await origin.shutdown()
    }

    @Test("files layout and every resize mode, as img2dataset sizes a 64x48 image for --image-size 32")
    func resizeModes() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        origin.route("/g.jpg", .ok(jpeg, contentType: "image/jpeg"))
        origin.route("/a.png", .ok([UInt8](try Fixture.data("gradient-rgba.png")), contentType: "image/png"))
        try [origin.url("/g.jpg").absoluteString, origin.url("/a.png").absoluteString].joined(separator: "\n")
            .write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
        // keep_ratio: 64 x 32/48 = 42.67 -> 43; border pads 32x24 with 4 white rows above.
        let expected: [(String, Int, Int)] = [
            ("no", 64, 48), ("keep_ratio", 43, 32), ("keep_ratio_largest", 32, 24), ("center_crop", 32, 32), ("border", 32, 32),
        ]
        for (mode, width, height) in expected {
            let out = workspace.path("out-\(mode)")
            let run = try await workspace.run([
                "prefetch", "-i", workspace.path("urls.txt"), "-o", out, "--output-format", "files", "--image-size", "32",
                "--resize-mode", mode, "--encode-format", "png", "--encode-quality", "9", "--json",
            ])
            #expect(run.status == 0, "\(mode): \(run.standardError)")
            #expect(
                Set(try FileManager.default.contentsOfDirectory(atPath: out)) == [
                    "00000", "00000.jsonl", "00000.parquet", "00000_stats.json",
                ])
            #expect(
                Set(try FileManager.default.contentsOfDirectory(atPath: out + "/00000")) == [
                    "000000000.png", "000000000.json", "000000001.png", "000000001.json",
                ], "no KEY.txt without a caption column")
            for key in ["000000000", "000000001"] {
                let image = try CodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: "\(out)/00000/\(key).png")))
                #expect((image.pixelWidth, image.pixelHeight) == (width, height), "\(mode)")
                #expect(!image.hasAlpha, "transparency matted on white, as img2dataset does")
                let record = try Self.json(try Data(contentsOf: URL(fileURLWithPath: "\(out)/00000/\(key).json")))
                #expect(record["width"] as? Int == width && record["height"] as? Int == height)
                if mode == "border" {
                    let corner = image.frames[0].pixels.pixel(x: 0, y: 0)
                    #expect(corner == (255, 255, 255, 255), "the padding is white: \(corner)")
                }
            }
        }
        try await origin.shutdown()
    }

    @Test("X-Robots-Tag opt-outs refuse the sample with img2dataset's reason; the token goes into the User-Agent and scopes the header")
    func optOuts() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        let tags = ["noai", "nofollow", "otherbot: noindex", "MyBot: noimageai", "noarchive, NoImageIndex"]
        for (index, tag) in tags.enumerated() {
            origin.route("/t\(index).jpg", OriginResponse(headers: [("Content-Type", "image/jpeg"), ("X-Robots-Tag", tag)], body: jpeg))
        }
        try tags.indices.map { origin.url("/t\($0).jpg").absoluteString }.joined(separator: "\n")
            .write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
        let run = try await workspace.run([
            "prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path("out"), "--output-format", "webdataset",
            "--user-agent-token", "MyBot", "--no-cache", "--allow-failures", "--json",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let records = try Self.records(ofLines: workspace.path("out/00000.jsonl"))
        let refused = records.filter { $0["error_message"] as? String == "Use of image disallowed by X-Robots-Tag directive" }
        #expect(Set(refused.compactMap { ($0["url"] as? String)?.split(separator: "/").last }) == ["t0.jpg", "t3.jpg", "t4.jpg"])
        #expect(refused.allSatisfy { $0["status"] as? String == "failed_to_download" })
        let agent = origin.requests(to: "/t1.jpg").first?.headers.first { $0.name.lowercased() == "user-agent" }?.value
        #expect(agent?.hasSuffix("(compatible; MyBot)") == true, "\(agent ?? "no User-Agent")")
        let stats = try Self.json(try Data(contentsOf: URL(fileURLWithPath: workspace.path("out/00000_stats.json"))))
        #expect((stats["status_dict"] as? [String: Int])?["Use of image disallowed by X-Robots-Tag directive"] == 3)

        let allowed = try await workspace.run([
            "prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path("all"), "--output-format", "webdataset",
            "--disallowed-header-directives", "", "--no-cache", "--json",
        ])
        #expect(allowed.status == 0 && allowed.json["succeeded"] as? Int == 5, "\(allowed.standardError)")
        try await origin.shutdown()
    }

    @Test(
        "issue 58: a dataset run whose shards are whole exits 0 with failed rows, as img2dataset; --min-success-rate makes too few an exit 1"
    )
    func exitStatus() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        origin.route("/ok.jpg", .ok(jpeg, contentType: "image/jpeg"))
        try [origin.url("/ok.jpg"), origin.url("/missing.jpg")].map(\.absoluteString).joined(separator: "\n")
            .write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
        func run(_ out: String, _ extra: [String]) async throws -> CommandRun {
            try await workspace.run(
                ["prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path(out), "--output-format", "webdataset", "--no-cache"]
                    + extra)
        }
        let plain = try await run("plain", [])
        #expect(plain.status == 0, "a 404 among the rows is a record, not a failed run: \(plain.standardError)")
        #expect(FileManager.default.fileExists(atPath: workspace.path("plain/00000_stats.json")))
        let strict = try await run("strict", ["--min-success-rate", "0.9"])
        #expect(strict.status == 1 && strict.standardError.contains("under --min-success-rate 0.9"), "\(strict.standardError)")
        #expect(FileManager.default.fileExists(atPath: workspace.path("strict/00000_stats.json")), "the shards are whole all the same")
        #expect(try await run("lenient", ["--min-success-rate", "0.5"]).status == 0)
        let named = try await workspace.run(["prefetch", "-i", workspace.path("urls.txt"), "--no-cache", "-o", workspace.path("named")])
        #expect(named.status == 1, "without a dataset layout a failed URL still fails the run unless --allow-failures")
        #expect(try await workspace.run(["prefetch", "-i", workspace.path("urls.txt"), "--min-success-rate", "2"]).status == 2)
        try await origin.shutdown()
    }

    @Test(
        "--bbox-col (img2dataset's --bbox_col, DataComp's face_bboxes) blurs the boxes before the crop, saves the column, and refuses a bad value"
    )
    func faceBoxes() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        let png = try CodersManager.shared.encode(Image(pixels: Self.stripes(width: 96, height: 64)), as: .png)
        origin.route("/face.png", .ok([UInt8](png), contentType: "image/png"))
        let url = origin.url("/face.png").absoluteString
        try "url,face_bboxes\n\(url),\"[[0.5, 0.0, 1.0, 0.5]]\"\n\(url),\n\(url),nonsense\n"
            .write(toFile: workspace.path("list.csv"), atomically: true, encoding: .utf8)
        let run = try await workspace.run([
            "prefetch", "-i", workspace.path("list.csv"), "--input-format", "csv", "--bbox_col", "face_bboxes", "-o",
            workspace.path("out"), "--output-format", "files", "--encode-format", "png", "--encode-quality", "9", "--resize-mode",
            "center_crop",
            "--image-size", "48", "--no-cache", "--json",
        ])
        #expect(run.status == 0 && run.json["succeeded"] as? Int == 2, "\(run.standardError)")
        #expect(!run.standardError.contains("bbox_col"), "no longer dropped with a warning")
        let blurred = try CodersManager.shared.decode(Data(contentsOf: URL(fileURLWithPath: workspace.path("out/00000/000000000.png"))))
            .pixels
        let plain = try CodersManager.shared.decode(Data(contentsOf: URL(fileURLWithPath: workspace.path("out/00000/000000001.png"))))
            .pixels
        #expect((blurred.width, blurred.height) == (48, 48))
        // The 72x48 scale is cut to its middle 48 columns (12...59): the box held x 36...71, y 0...23
        // of the scale, widened by 3 px: blurred there, the far corner untouched.
        #expect(blurred.pixel(x: 40, y: 8) != plain.pixel(x: 40, y: 8), "inside the box")
        #expect(blurred.pixel(x: 2, y: 44) == plain.pixel(x: 2, y: 44), "far from it")
        // The lines come as the rows finish; the keys say which is which.
        let records = Dictionary(
            uniqueKeysWithValues: try Self.records(ofLines: workspace.path("out/00000.jsonl")).map { ($0["key"] as? String ?? "", $0) })
        #expect(records["000000000"]?["face_bboxes"] as? String == "[[0.5, 0.0, 1.0, 0.5]]", "saved as img2dataset saves the column")
        let refused = records["000000002"]
        #expect(
            refused?["status"] as? String == "failed_to_resize" && (refused?["error_message"] as? String)?.contains("face_bboxes") == true)
        try await origin.shutdown()
    }

    /// Vertical stripes a blur changes wherever it reaches.
    static func stripes(width: Int, height: Int) -> PixelBuffer {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for index in 0..<(width * height) where (index % width) % 4 < 2 {
            bytes[index * 4] = 0
            bytes[index * 4 + 1] = 0
        }
        return PixelBuffer(width: width, height: height, straightRGBA: bytes)
    }

    @Test("--verify-hash refuses a mismatch, --dedup records a repeat, the size filters refuse with img2dataset's words, md5 records")
    func hashesAndFilters() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        let png = [UInt8](try Fixture.data("gradient-rgba.png"))
        origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
        origin.route("/copy.jpg", .ok(jpeg, contentType: "image/jpeg"))
        origin.route("/b.png", .ok(png, contentType: "image/png"))
        let md5 = DigestKind.md5.hex(of: Data(jpeg))
        let list = [
            #"{"url": "\#(origin.url("/a.jpg"))", "md5": "\#(md5)"}"#,
            #"{"url": "\#(origin.url("/copy.jpg"))", "md5": "\#(md5.uppercased())"}"#,
            #"{"url": "\#(origin.url("/b.png"))", "md5": "\#(md5)"}"#,
        ]
        try list.joined(separator: "\n").write(toFile: workspace.path("list.jsonl"), atomically: true, encoding: .utf8)
        let run = try await workspace.run([
            "prefetch", "-i", workspace.path("list.jsonl"), "--input-format", "jsonl", "--verify-hash", "md5,md5", "--compute-hash", "md5",
            "--dedup", "-o", workspace.path("out"), "--output-format", "webdataset", "--no-cache", "--allow-failures", "--json",
            // One at a time: the row kept is the first to finish, which is then the first in the list.
            "-j", "1",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let records = try Self.records(ofLines: workspace.path("out/00000.jsonl")).sorted {
            ($0["key"] as? String ?? "") < ($1["key"] as? String ?? "")
        }
        #expect(records.map { $0["status"] as? String } == ["success", "duplicate", "failed_to_download"])
        #expect(records[0]["md5"] as? String == md5 && records[0].keys.contains("md5"))
        #expect(records[1]["error_message"] as? String == "duplicate of 000000000")
        #expect(records[2]["error_message"] as? String == "hash mismatch")
        #expect(!records.contains { $0.keys.contains("sha256") }, "--compute-hash md5 replaces the sha256 field")

        let filtered = try await workspace.run([
            "prefetch", "-i", workspace.path("list.jsonl"), "--input-format", "jsonl", "--min-image-size", "50",
            "-o", workspace.path("small"), "--output-format", "webdataset", "--no-cache", "--allow-failures", "--json",
        ])
        #expect(filtered.json["failed"] as? Int == 3, "\(filtered.standardError)")
        let refused = try Self.records(ofLines: workspace.path("small/00000.jsonl"))
        #expect(refused.allSatisfy { $0["status"] as? String == "failed_to_resize" && $0["error_message"] as? String == "image too small" })
        try await origin.shutdown()
    }

    @Test("--disable-all-reencoding keeps the downloaded bytes in the shards; a page is a download failure")
    func originals() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        let paths = (0..<5).map { "/n\($0).jpg" } + ["/page.jpg"]
        for path in paths.dropLast() { origin.route(path, .ok(jpeg, contentType: "image/jpeg")) }
        origin.route("/page.jpg", .htmlPage())
        try paths.map { origin.url($0).absoluteString }.joined(separator: "\n")
            .write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
        let arguments = [
            "prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path("out"), "--output-format", "tar", "--no-cache",
            "--disable-all-reencoding", "--allow-failures", "--json",
        ]
        let run = try await workspace.run(arguments)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.json["succeeded"] as? Int == 5 && run.json["failed"] as? Int == 1)
        let members = try Self.members(ofTar: workspace.path("out/00000.tar"))
        #expect(members.map(\.name).filter { $0.hasSuffix(".jpg") }.count == 5)
        #expect(members.first { $0.name == "000000000.jpg" }?.data == Data(jpeg), "the original bytes")
        let failed = try Self.records(ofLines: workspace.path("out/00000.jsonl")).first { $0["status"] as? String == "failed_to_download" }
        #expect((failed?["url"] as? String)?.hasSuffix("/page.jpg") == true)
        let stats = try await workspace.run(["cache", "stats", "--json"])
        #expect(stats.json["count"] as? Int == 0, "nothing in the disk cache: \(stats.lines)")
        let again = try await workspace.run(arguments)
        #expect(again.json["skipped"] as? Int == 6)
        for path in paths { #expect(origin.requestCount(path) == 1) }
        try await origin.shutdown()
    }

    @Test(
        "SIGKILL in the middle of a shard: no shard under its final name is torn; a rerun fetches only what is missing",
        arguments: ["tar", "parquet"])
    func resumesAfterKill(layout: String) async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
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
            "prefetch", "-i", workspace.path("urls.txt"), "-o", out, "--output-format", layout, "--shard-size", "10", "-j", "4", "--json",
            // A stalled row is neither timed out nor tried again before the kill, however slow the build.
            "--timeout", "600", "--retries", "0",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["WEBIMAGE_CACHE_DIR"] = workspace.cacheDirectory.path
        let first = try ChildProcess(ChildProcess.builtProduct("webimage"), arguments, environment: environment)
        for index in stalled { _ = try await origin.waitForRequests(1, to: paths[index], timeout: .seconds(60)) }
        first.kill()
        #expect(try await first.waitForExit().signaled)

        var files = Set(try FileManager.default.contentsOfDirectory(atPath: out))
        #expect(
            files.isSuperset(of: ["00000.\(layout)", "00000.jsonl", "00000_stats.json", "00001_stats.json", "00002.\(layout).partial"]),
            "\(files)")
        #expect(!files.contains("00002_stats.json") && !files.contains("00003_stats.json"), "no torn shard counted as done")

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
        #expect(
            files == Set((0..<4).flatMap { ["0000\($0).\(layout)", "0000\($0).jsonl", "0000\($0).parquet", "0000\($0)_stats.json"] }),
            "\(files)")
        var keys: [String] = []
        for shard in 0..<4 {
            let records = try Self.records(ofLines: "\(out)/0000\(shard).jsonl")
            #expect(records.count == 10 && records.allSatisfy { $0["status"] as? String == "success" })
            if layout == "tar" {
                #expect(try Self.members(ofTar: "\(out)/0000\(shard).tar").count == 20, "KEY.jpg and KEY.json, no caption column")
            }
            keys += records.compactMap { $0["key"] as? String }
        }
        #expect(keys.sorted() == (0..<40).map { String(format: "%06d", $0) })
        if layout == "parquet" {
            let read = try await Self.readShards(
                imageColumn: "jpg", (0..<4).map { "\(out)/0000\($0).parquet" }, cache: workspace.path("hf"))
            let rows = try #require(read["pyarrow"] as? [[String: Any]])
            #expect(rows.count == 40 && rows.allSatisfy { $0["image_sha256"] is String }, "every shard whole, each image in its row")
        }
        try await origin.shutdown()
    }

    @Test("with --shard I/N the runs' shards are numbered I, I+N, ... and merge into one dataset with every URL once")
    func slicesMerge() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
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
            #expect(
                tars.count == Set(try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix("_stats.json") }).count)
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
        #expect(Set(keys).count == 30 && keys.count == 30, "every URL once, under a key of its own")
        #expect(keys.allSatisfy { $0.count == 6 }, "img2dataset's keys for 4 rows a shard: 1 + 5 digits")
        for path in paths { #expect(origin.requestCount(path) == 1) }
        try await origin.shutdown()
    }

    @Test(
        "--skip-reencode keeps bytes already in the encode format (not a transparent PNG, which is matted); --keep-animation keeps frames in WebP"
    )
    func reencodingAndAnimation() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        let png = [UInt8](try Fixture.data("gradient-rgba.png"))
        let gif = [UInt8](try Fixture.data("animated.gif"))
        origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
        origin.route("/b.png", .ok(png, contentType: "image/png"))
        origin.route("/c.gif", .ok(gif, contentType: "image/gif"))
        try ["/a.jpg", "/b.png", "/c.gif"].map { origin.url($0).absoluteString }.joined(separator: "\n")
            .write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
        func images(_ name: String, _ options: [String]) async throws -> [String: Data] {
            let run = try await workspace.run(
                ["prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path(name), "--output-format", "webdataset", "--json"]
                    + options)
            #expect(run.status == 0, "\(run.standardError)")
            let members = try Self.members(ofTar: workspace.path(name + "/00000.tar")).filter { !$0.name.hasSuffix(".json") }
            return Dictionary(uniqueKeysWithValues: members.map { (String($0.name.prefix(9)), $0.data) })
        }
        let jpegs = try await images("jpg", ["--resize-mode", "no", "--skip-reencode"])
        #expect(jpegs["000000000"] == Data(jpeg), "a JPEG needing no resize is kept as it came")
        let reencoded = try CodersManager.shared.decode(try #require(jpegs["000000001"]))
        #expect(reencoded.sourceFormat == .jpeg, "a PNG is encoded as the jpg asked for")
        let pngs = try await images("png", ["--resize-mode", "no", "--skip-reencode", "--encode-format", "png", "--encode-quality", "9"])
        let matted = try CodersManager.shared.decode(try #require(pngs["000000001"]))
        #expect(pngs["000000001"] != Data(png) && !matted.hasAlpha, "transparency is matted on white, so the PNG is encoded again")
        let still = try await images("still", ["--resize-mode", "no", "--encode-format", "webp"])
        #expect(try CodersManager.shared.decode(try #require(still["000000002"])).frames.count == 1, "the first frame, as img2dataset")
        let animated = try await images("animated", ["--resize-mode", "no", "--encode-format", "webp", "--keep-animation"])
        let frames = try CodersManager.shared.decode(try #require(animated["000000002"])).frames.count
        #expect(frames == (try CodersManager.shared.decode(Data(gif))).frames.count && frames > 1)
        try await origin.shutdown()
    }

    @Test("an img2dataset command line, as written after the program's name, makes the same job")
    func img2datasetCommandLine() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        for index in 0..<3 { origin.route("/i\(index).jpg", .ok(jpeg, contentType: "image/jpeg")) }
        try (0..<3).map { origin.url("/i\($0).jpg").absoluteString }.joined(separator: "\n")
            .write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
        let run = try await workspace.run([
            "prefetch", "--url_list=\(workspace.path("urls.txt"))", "--output_folder", workspace.path("out"), "--output_format",
            "webdataset", "--image_size=32", "--resize_mode", "keep_ratio", "--processes_count", "2", "--thread_count", "4",
            "--enable_wandb", "False", "--resize_only_if_bigger", "False", "--json",
        ])
        #expect(run.status == 0 && run.json["succeeded"] as? Int == 3, "\(run.standardError)")
        #expect(run.standardError.contains("--processes_count is img2dataset's and has no effect here"))
        let images = try Self.members(ofTar: workspace.path("out/00000.tar")).filter { $0.name.hasSuffix(".jpg") }
        // keep_ratio to 32: 64x48 becomes 43x32 (42.67 rounded).
        #expect(try images.map { try CodersManager.shared.decode($0.data).pixelWidth } == [43, 43, 43])
        try await origin.shutdown()
    }

    /// The DuckDB command-line tool (PyPI `duckdb-cli`), which `scripts/test.sh` installs and names
    /// in `WEBIMAGE_DUCKDB`; else one on the PATH.
    static let duckdb: String? = {
        if let named = ProcessInfo.processInfo.environment["WEBIMAGE_DUCKDB"], FileManager.default.isExecutableFile(atPath: named) {
            return named
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":").map { "\($0)/duckdb" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    @Test(
        "a Parquet list read natively, as LAION spells its columns (URL, TEXT), DuckDB's writer this time; a folder of parts too",
        .enabled(if: duckdb != nil))
    func parquetList() async throws {
        let duckdb = try #require(Self.duckdb)
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        for index in 0..<4 { origin.route("/p\(index).jpg", .ok(jpeg, contentType: "image/jpeg")) }
        try FileManager.default.createDirectory(atPath: workspace.path("parts"), withIntermediateDirectories: true)
        for part in 0..<2 {
            let rows = (0..<2).map { part * 2 + $0 }.map { "('\(origin.url("/p\($0).jpg"))', 'caption \($0), with \"quotes\" — é', \($0))" }
            let parquet = workspace.path("parts/part-\(part).parquet")
            let make = try ChildProcess(
                URL(fileURLWithPath: duckdb),
                ["-c", "COPY (SELECT * FROM (VALUES \(rows.joined(separator: ", "))) t(URL, TEXT, n)) TO '\(parquet)' (FORMAT parquet)"])
            #expect(try await make.waitForExit().status == 0)
        }
        func captions(_ arguments: [String], into out: String) async throws -> [String] {
            let run = try await workspace.run(
                ["prefetch"] + arguments + [
                    "--url-col", "URL", "--caption-col", "TEXT", "-o", out, "--output-format", "webdataset", "--no-cache", "--json",
                ])
            #expect(run.status == 0, "\(run.standardError)")
            return try Self.members(ofTar: out + "/00000.tar").filter { $0.name.hasSuffix(".txt") }.map {
                String(decoding: $0.data, as: UTF8.self)
            }
        }
        // One file, found by its bytes (no --input-format), then the folder as one list.
        #expect(
            try await captions(["-i", workspace.path("parts/part-1.parquet")], into: workspace.path("one")).sorted()
                == (2..<4).map { "caption \($0), with \"quotes\" — é" })
        #expect(
            try await captions(["-i", workspace.path("parts"), "--input-format", "parquet"], into: workspace.path("all")).sorted()
                == (0..<4).map { "caption \($0), with \"quotes\" — é" })
        // The shard's own Parquet table, read by DuckDB: LAION's columns saved under img2dataset's names.
        let table = workspace.path("all/00000.parquet")
        let query = try ChildProcess(
            URL(fileURLWithPath: duckdb),
            ["-csv", "-noheader", "-c", "SELECT count(*), count(caption), min(status), typeof(min(width)) FROM '\(table)'"])
        #expect(try await query.waitForExit().status == 0)
        #expect(query.lines.last == "4,4,success,INTEGER", "\(query.lines)")
        try await origin.shutdown()
    }

    /// What `read_shards.py` saw of shards' tables, through pyarrow and Hugging Face `datasets`.
    static func readShards(imageColumn: String, _ files: [String], cache: String) async throws -> [String: Any] {
        let script = try #require(Bundle.module.url(forResource: "read_shards", withExtension: "py"))
        let python = TestPython.command
        let process = try ChildProcess(
            python.executable, python.arguments + [script.path, imageColumn] + files,
            environment: ProcessInfo.processInfo.environment.merging(["HF_CACHE_DIR": cache, "HF_HOME": cache]) { $1 })
        let exit = try await process.waitForExit()
        #expect(exit.status == 0, "read_shards.py: does the tests' Python have pyarrow and datasets? (scripts/python-deps.sh)")
        return try Self.json(Data((process.lines.last ?? "").utf8))
    }

    @Test(
        "--output-format parquet: img2dataset's table with the images in a binary column named by the encode format, read by pyarrow, Hugging Face datasets and DuckDB"
    )
    func parquetOutput() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        var csv = "url,caption\n"
        for index in 0..<12 {
            let path = index % 5 == 2 ? "/gone-\(index).jpg" : "/img-\(index).jpg"
            if index % 5 != 2 { origin.route(path, .ok(jpeg, contentType: "image/jpeg")) }
            csv += "\(origin.url(path).absoluteString),caption \(index)\n"
        }
        try csv.write(toFile: workspace.path("list.csv"), atomically: true, encoding: .utf8)
        let out = workspace.path("out")
        let run = try await workspace.run([
            "prefetch", "-i", workspace.path("list.csv"), "--input-format", "csv", "--caption-col", "caption", "-o", out, "--output-format",
            "parquet",
            "--shard-size", "5", "--image-size", "32", "--resize-mode", "center_crop", "--encode-format", "webp", "--no-cache", "--json",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.json["succeeded"] as? Int == 10 && run.json["failed"] as? Int == 2)
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(files == (0..<3).flatMap { ["0000\($0).jsonl", "0000\($0).parquet", "0000\($0)_stats.json"] }, "no tar, no folders")

        let tables = (0..<3).map { "\(out)/0000\($0).parquet" }
        let read = try await Self.readShards(imageColumn: "webp", tables, cache: workspace.path("hf"))
        // img2dataset's ParquetSampleWriter: the list's columns, its own, then the image column.
        let schema = try #require(read["schema"] as? [[String]])
        #expect(
            schema.map { $0[0] } == [
                "caption", "url", "key", "status", "error_message", "width", "height", "original_width",
                "original_height", "exif", "sha256", "webp",
            ])
        #expect(schema.last?[1] == "binary" && schema[5][1] == "int32" && schema[2][1] == "string")
        #expect(read["datasets_columns"] as? [String] == schema.map { $0[0] })
        let rows = try #require(read["pyarrow"] as? [[String: Any]])
        #expect(rows.count == 12)
        let keys = try (0..<3).flatMap { try Self.records(ofLines: "\(out)/0000\($0).jsonl").compactMap { $0["key"] as? String } }
        #expect(Set(rows.compactMap { $0["key"] as? String }) == Set(keys) && keys.count == 12)
        for row in rows {
            if row["status"] as? String == "success" {
                let image = try #require(Data(base64Encoded: row["image"] as? String ?? ""))
                #expect(ImageFormat(sniffing: [UInt8](image.prefix(64))) == .webP)
                let decoded = try CodersManager.shared.decode(image)
                #expect((decoded.pixelWidth, decoded.pixelHeight) == (32, 32))
            } else {
                #expect(row["status"] as? String == "failed_to_download" && row["image"] is NSNull, "a failure's image is null")
            }
        }
        #expect(rows.filter { $0["status"] as? String == "success" }.count == 10)
        let hf = try #require(read["datasets"] as? [[String: Any]])
        #expect(hf.map { $0["image"] as? String } == rows.map { $0["image"] as? String }, "datasets reads the same images")
        if let duckdb = Self.duckdb {
            let query = try ChildProcess(
                URL(fileURLWithPath: duckdb),
                [
                    "-csv", "-noheader", "-c",
                    "SELECT count(*), count(webp), min(octet_length(webp)) > 0 FROM read_parquet('\(out)/*.parquet')",
                ])
            #expect(try await query.waitForExit().status == 0)
            #expect(query.lines.last == "12,10,true", "\(query.lines)")
        }
        try await origin.shutdown()
    }
}
