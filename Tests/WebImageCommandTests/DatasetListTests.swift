import Foundation
import Testing
import WebImage
import WebImageTesting

@testable import webimage
import WebImageServer
import WebImageTestSupport

/// The lists `prefetch --input-format` reads, as img2dataset reads them (its `reader.py`: pyarrow's
/// CSV reader with a header row, `pandas.read_json` for a JSON array, `pyarrow.json` for JSON
/// Lines; `.gz` lists inflated), read here a block at a time.
@Suite("prefetch lists: txt, csv, tsv, jsonl, json, gzip")
struct DatasetListTests {
    private func write(_ text: String, _ name: String = "list") throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("list-\(UUID().uuidString)-\(name)").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func rows(_ path: String, _ format: ListFormat, _ columns: ListColumns = ListColumns()) throws -> [ListRow] {
        let reader = try SampleListReader(path: path, format: format, columns: columns)
        var rows: [ListRow] = []
        while let row = try reader.next() { rows.append(row) }
        return rows
    }

    @Test("CSV: quoted commas, doubled quotes, line breaks and UTF-8 inside fields, CRLF ends, a BOM, extra columns in order")
    func awkwardCSV() throws {
        let csv =
            "\u{FEFF}url,caption,width,note\r\n"
            + "http://a.test/1.jpg,\"a cat, on a mat\",640,plain\r\n"
            + "http://a.test/2.jpg,\"she said \"\"hi\"\"\",480,\"two\nlines\"\r\n"
            + "http://a.test/3.jpg,café ☕ 東京,,x\n"
            + "http://a.test/4.jpg,unquoted \"quote\" inside,1,y"
        let path = try write(csv)
        let columns = ListColumns(caption: "caption", additional: ["note", "width"])
        let rows = try rows(path, .csv, columns)
        #expect(rows.map(\.url) == (1...4).map { "http://a.test/\($0).jpg" })
        #expect(rows.map(\.caption) == ["a cat, on a mat", "she said \"hi\"", "café ☕ 東京", "unquoted \"quote\" inside"])
        #expect(rows[1].columns == [.init(name: "note", value: .string("two\nlines")), .init(name: "width", value: .string("480"))])
        #expect(rows[2].columns[1].value == .string(""), "an empty field is an empty string, as pyarrow reads a text column")
        #expect(rows.allSatisfy { $0.malformed == nil })
    }

    @Test(
        "CSV: a record with the wrong number of fields is kept as a malformed row; an open quote at the end is an error; a missing column is named"
    )
    func malformedCSV() throws {
        let rows = try rows(
            try write("url,caption\nhttp://a.test/1.jpg,one\nhttp://a.test/2.jpg,two,three\nhttp://a.test/3.jpg\n"), .csv,
            ListColumns(caption: "caption"))
        #expect(rows.count == 3)
        #expect(rows[1].malformed == "record 3 has 3 fields where the header has 2" && rows[1].url == "http://a.test/2.jpg")
        #expect(rows[2].malformed != nil && rows[2].caption == nil)

        #expect(throws: CommandFailure.self) { try self.rows(try write("url\n\"http://a.test/open.jpg\n"), .csv) }
        let missing = #expect(throws: CommandFailure.self) { try self.rows(try write("link,text\nhttp://a.test/1.jpg,x\n"), .csv) }
        #expect(missing?.description.contains("no column \"url\"") == true)
        #expect(throws: CommandFailure.self) { try self.rows(try write(""), .csv) }
    }

    @Test("TSV: tab-separated with a header, quotes as in CSV")
    func tsv() throws {
        let rows = try rows(
            try write("name\tlink\tcaption\nx\thttp://a.test/1.jpg\t\"tab\there\"\n"), .tsv,
            ListColumns(url: "link", caption: "caption"))
        #expect(rows == [ListRow(url: "http://a.test/1.jpg", caption: "tab\there")])
    }

    @Test("JSON Lines and a JSON array: typed values kept, object member order kept, elements split across read blocks")
    func json() throws {
        // Long enough that elements straddle the 64 KiB blocks the reader takes.
        let filler = String(repeating: "x", count: 700)
        let objects = (0..<300).map {
            "{\"url\": \"http://a.test/\($0).jpg\", \"caption\": \"c\\u00e9 \\ud83d\\ude00 \($0)\", \"n\": \($0), \"f\": 1.5, \"ok\": true, \"nested\": {\"b\": 1, \"a\": [null]}, \"pad\": \"\(filler)\"}"
        }
        let columns = ListColumns(caption: "caption", additional: ["n", "f", "ok", "nested", "absent"])
        for (format, text) in [
            (ListFormat.jsonl, objects.joined(separator: "\n") + "\n"), (.json, "[\n" + objects.joined(separator: ",\n") + "\n]"),
        ] {
            let rows = try rows(try write(text), format, columns)
            #expect(rows.count == 300, "\(format)")
            #expect(rows[299].url == "http://a.test/299.jpg" && rows[299].caption == "cé 😀 299")
            #expect(
                rows[7].columns.map(\.value) == [
                    .integer(7), .number(1.5), .bool(true),
                    .object([.init(name: "b", value: .integer(1)), .init(name: "a", value: .array([.null]))]), .null,
                ])
        }
        #expect(throws: CommandFailure.self) { try self.rows(try write("{\"url\": \"http://a.test/1.jpg\"}\n{\"url\": \n"), .jsonl) }
        #expect(throws: CommandFailure.self) { try self.rows(try write("[{\"url\": \"http://a.test/1.jpg\"} {\"url\": \"x\"}]"), .json) }
        #expect(try rows(try write("[]"), .json).isEmpty)
    }

    @Test("gzip-compressed lists are found by their bytes, several members read as one; a cut gzip file is an error")
    func gzip() async throws {
        let plain = try write((0..<20_000).map { "http://a.test/\($0).jpg\n" }.joined(), "urls.txt")
        // The project's ChildProcess, not Foundation's Process, whose run() leaks a weak
        // reference's side table (LeakSanitizer).
        let gzip = try ChildProcess(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "gzip -c '\(plain)' > '\(plain).gz' && (gzip -c '\(plain)'; gzip -c '\(plain)') > '\(plain).2.gz'"])
        #expect(try await gzip.waitForExit().status == 0)
        let rows = try rows(plain + ".gz", .txt)
        #expect(rows.count == 20_000 && rows.last?.url == "http://a.test/19999.jpg")
        #expect(try self.rows(plain + ".2.gz", .txt).count == 40_000)
        let whole = try Data(contentsOf: URL(fileURLWithPath: plain + ".gz"))
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: plain + ".cut.gz"))
        #expect(throws: CommandFailure.self) { try self.rows(plain + ".cut.gz", .txt) }
    }

    @Test("records are written in img2dataset's field order with Python's separators, and indented as json.dumps(indent=4)")
    func recordText() throws {
        let record = JSONValue.object([
            .init(name: "caption", value: .string("a \"b\"\n")), .init(name: "width", value: .integer(32)),
            .init(name: "error_message", value: .null), .init(name: "ratio", value: .number(0.5)),
            .init(name: "list", value: .array([])),
        ])
        #expect(record.serialized() == #"{"caption": "a \"b\"\n", "width": 32, "error_message": null, "ratio": 0.5, "list": []}"#)
        #expect(
            record.serialized(indent: 4)
                == "{\n    \"caption\": \"a \\\"b\\\"\\n\",\n    \"width\": 32,\n    \"error_message\": null,\n    \"ratio\": 0.5,\n    \"list\": []\n}"
        )
        #expect(try JSONParser.parse(Array(record.serialized(indent: 4).utf8)) == record)
    }
}

/// img2dataset's resizer arithmetic (its `resizer.py` with albumentations 1.4.24, the version
/// img2dataset 1.47 installs: `SmallestMaxSize`/`LongestMaxSize` scale each side by
/// `max(1, round(side * scale))` with Python's half-to-even `round`; `CenterCrop` starts at
/// `(side - crop) // 2`; `PadIfNeeded` puts `int((size - side) / 2.0)` before and the rest after).
@Suite("prefetch --resize-mode as img2dataset computes it")
struct DatasetResizeTests {
    private func plan(_ mode: DatasetResizeMode, _ width: Int, _ height: Int, size: Int = 256, onlyIfBigger: Bool = false)
        -> DatasetResizePlan
    {
        DatasetResizer(imageSize: size, mode: mode, onlyIfBigger: onlyIfBigger).plan(width: width, height: height)
    }

    @Test("keep_ratio and center_crop fix the shorter side; keep_ratio_largest and border the longer")
    func modes() {
        // 1024x768 to 256: scale 1/3 on the shorter side: 341.33 -> 341; 768/4 on the longer.
        #expect(plan(.keepRatio, 1024, 768) == DatasetResizePlan(scaled: (341, 256), downscale: true))
        #expect(plan(.centerCrop, 1024, 768) == DatasetResizePlan(scaled: (341, 256), crop: (42, 0, 256, 256), downscale: true))
        #expect(plan(.keepRatioLargest, 1024, 768) == DatasetResizePlan(scaled: (256, 192), downscale: true))
        #expect(plan(.border, 1024, 768) == DatasetResizePlan(scaled: (256, 192), pad: (256, 256, 0, 32), downscale: true))
        #expect(plan(.no, 1024, 768) == DatasetResizePlan())
        // A portrait image: the crop is vertical, the padding horizontal; odd padding goes after.
        #expect(plan(.centerCrop, 300, 457) == DatasetResizePlan(scaled: (256, 390), crop: (0, 67, 256, 256), downscale: true))
        #expect(plan(.border, 300, 457) == DatasetResizePlan(scaled: (168, 256), pad: (256, 256, 44, 0), downscale: true))
    }

    @Test("halves round to even, as Python's round does; a side never reaches 0")
    func rounding() {
        // 10 x 1.25 = 12.5 rounds to 12, the even neighbour.
        #expect(DatasetResizer.scaled(width: 10, height: 4, by: 1.25) == (12, 5))
        #expect(DatasetResizer.scaled(width: 14, height: 4, by: 1.25) == (18, 5), "17.5 rounds to 18")
        #expect(DatasetResizer.scaled(width: 2000, height: 1, by: 0.1) == (200, 1), "0.1 rounds to 0 and is raised to 1")
        #expect(plan(.keepRatioLargest, 5000, 3, size: 100) == DatasetResizePlan(scaled: (100, 1), downscale: true))
    }

    @Test("smaller images are enlarged unless --resize-only-if-bigger, which leaves them as they are")
    func enlarging() {
        #expect(plan(.keepRatio, 64, 48) == DatasetResizePlan(scaled: (341, 256), downscale: false))
        #expect(plan(.keepRatio, 64, 48, onlyIfBigger: true) == DatasetResizePlan())
        #expect(plan(.border, 64, 48, onlyIfBigger: true) == DatasetResizePlan(), "no padding either: img2dataset pads only after a resize")
        #expect(plan(.centerCrop, 300, 200, onlyIfBigger: true) == DatasetResizePlan(), "the shorter side, 200, is not over 256")
        #expect(
            plan(.centerCrop, 600, 400, onlyIfBigger: true)
                == DatasetResizePlan(scaled: (384, 256), crop: (64, 0, 256, 256), downscale: true))
    }

    @Test("the filters, in img2dataset's order and words")
    func filters() {
        let resizer = DatasetResizer(minimumImageSize: 100, maximumImageArea: 60_000, maximumAspectRatio: 1.5)
        #expect(resizer.refusal(width: 99, height: 400)?.description == "image too small")
        #expect(resizer.refusal(width: 300, height: 201)?.description == "image area too large")
        #expect(resizer.refusal(width: 160, height: 100)?.description == "aspect ratio too large")
        #expect(resizer.refusal(width: 150, height: 100) == nil)
    }
}

/// `X-Robots-Tag` as img2dataset's `is_disallowed` reads it.
@Suite("X-Robots-Tag opt-outs")
struct RobotsTagTests {
    let tag = RobotsTag(disallowed: ["noai", "noimageai", "noindex", "noimageindex"], token: "mybot")

    @Test("directives, case and spaces; a user agent's form counts only for our token; every header value counts")
    func directives() {
        #expect(tag.refuses(value: "noai"))
        #expect(tag.refuses(value: "nofollow, NoImageAI"))
        #expect(!tag.refuses(value: "nofollow, noarchive"))
        #expect(tag.refuses(value: "MyBot: noindex"))
        #expect(!tag.refuses(value: "otherbot: noindex"))
        #expect(!tag.refuses(value: " mybot: noindex"), "img2dataset compares the agent as written, lower-cased, not trimmed")
        func kept(_ values: [String]) -> DiskCacheMetadata {
            var metadata = DiskCacheMetadata()
            metadata.retainedHeaders[RobotsTag.headerName] = values
            return metadata
        }
        #expect(tag.refuses(kept(["nofollow", "otherbot: noai, noindex", "noimageindex"])))
        #expect(!tag.refuses(kept(["nofollow", "otherbot: noai"])))
        #expect(!tag.refuses(nil) && !tag.refuses(DiskCacheMetadata()), "nothing kept: nothing refuses")
        #expect(!RobotsTag(disallowed: [], token: nil).refuses(kept(["noai"])), "an empty list refuses nothing")
        #expect(!RobotsTag(disallowed: ["noai"], token: nil).refuses(value: "mybot: noai"), "without a token, a named agent is another one")
    }
}

/// `robots.txt` as RFC 9309 reads it (sections 2.1 to 2.2.3 and 5.1's examples).
@Suite("robots.txt rules")
struct RobotsRulesTests {
    @Test("the group of our product token (case-insensitive, groups merged), else *; longest match wins, allow on a tie")
    func groups() {
        let text = """
            # comment
            User-Agent: MyBot
            Disallow: /private/
            Allow: /private/open
            Crawl-delay: 2.5

            user-agent: otherbot
            disallow: /

            User-agent: mybot
            Disallow: /tmp

            User-agent: *
            Disallow: /
            """
        let rules = RobotsRules.parse(text, agent: "mybot")
        #expect(rules.crawlDelay == 2.5)
        #expect(!rules.allows("/private/x.jpg") && rules.allows("/private/open/x.jpg") && !rules.allows("/tmp/a"))
        #expect(rules.allows("/public/a.jpg"), "the * group does not apply to a crawler with its own group")
        let others = RobotsRules.parse(text, agent: "somebody")
        #expect(!others.allows("/public/a.jpg") && others.allows("/robots.txt"))
        let tie = RobotsRules.parse("User-agent: *\nDisallow: /page\nAllow: /page\n", agent: "x")
        #expect(tie.allows("/page"), "the least restrictive of equally long rules")
        #expect(RobotsRules.parse("User-agent: *\nDisallow:\n", agent: "x").allows("/anything"), "an empty disallow is no rule")
        #expect(RobotsRules.parse("", agent: "x") == .allowAll)
    }

    @Test("* matches any run of characters and a final $ the end")
    func wildcards() {
        #expect(RobotsRules.matches("/*.jpg$", "/a/b.jpg") && !RobotsRules.matches("/*.jpg$", "/a/b.jpg?x=1"))
        #expect(RobotsRules.matches("/*.jpg", "/a/b.jpg?x=1"), "without $ a pattern matches a prefix")
        #expect(RobotsRules.matches("/a*b*c", "/axxbyyc/more") && !RobotsRules.matches("/a*b*c", "/axxbyy"))
        #expect(RobotsRules.matches("/", "/x") && !RobotsRules.matches("/x$", "/xy"))
        #expect(RobotsRules.matches("*", "/") && RobotsRules.matches("/**/x", "/a/x"))
        let rules = RobotsRules.parse("User-agent: *\nDisallow: /*.gif$\nAllow: /$\nDisallow: /\n", agent: "x")
        #expect(rules.allows("/") && !rules.allows("/a.gif") && !rules.allows("/page"))
    }
}

/// The `exif` field against exifread 3.0.1 (img2dataset's reader, `process_file(f,
/// details=False)`, printed as img2dataset prints it): `scripts/fixtures/make_exif.py` wrote the
/// fixtures with Pillow and ran exifread on them for `Fixtures/exif/expected.json`.
@Suite("prefetch's exif field as exifread prints it")
struct ExifDumpTests {
    @Test("JPEG and WebP: every tag exifread names, in its order, printed alike")
    func matchesExifread() throws {
        let expected = try #require(
            try JSONSerialization.jsonObject(with: Fixture.data("exif/expected.json")) as? [String: Any])
        for name in ["camera.jpg", "camera.webp"] {
            let ours = try #require(ExifDump.json(of: try Fixture.data("exif/" + name)), "\(name)")
            let theirs = try #require(expected[name] as? String)
            guard case .object(let oursMembers) = try JSONParser.parse(Array(ours.utf8)),
                case .object(var theirsMembers) = try JSONParser.parse(Array(theirs.utf8))
            else { throw CommandFailure("not objects") }
            let oursNames: [String] = oursMembers.map { $0.name }
            // exifread 3.0.1 reads these two four-byte values stored inside their entries as zeros
            // ([0, 0, 0, 0] and the empty text); the bytes are 2 2 0 0 and "0232".
            for index in theirsMembers.indices where theirsMembers[index].name == "GPS GPSVersionID" {
                theirsMembers[index].value = .string("[2, 2, 0, 0]")
            }
            for index in theirsMembers.indices where theirsMembers[index].name == "EXIF ExifVersion" {
                theirsMembers[index].value = .string("0232")
            }
            #expect(oursNames == theirsMembers.map { $0.name }, "\(name)")
            #expect(oursMembers == theirsMembers, "\(name)")
        }
    }

    @Test("no EXIF is {}; a format exifread does not read is null; damaged directories end the reading without a crash")
    func edges() throws {
        #expect(ExifDump.json(of: try Fixture.data("gradient.jpg")) == "{}")
        #expect(ExifDump.json(of: try Fixture.data("animated.gif")) == nil)
        #expect(ExifDump.json(of: try Fixture.data("oriented-right.jpg")) == #"{"Image Orientation": "Rotated 90 CW"}"#)
        var camera = [UInt8](try Fixture.data("exif/camera.jpg"))
        // Cut the file in the middle of its EXIF, then point every offset past the end.
        for cut in stride(from: 20, to: 400, by: 37) {
            _ = ExifDump.json(of: Data(camera.prefix(cut)))
        }
        for index in 30..<min(camera.count, 300) where index % 5 == 0 { camera[index] = 0xFF }
        _ = ExifDump.json(of: Data(camera))
    }
}

/// img2dataset's command line (Python Fire's spellings, as its README and dataset examples write
/// them) translated for `prefetch`.
@Suite("img2dataset command lines on prefetch")
struct Img2datasetArgumentsTests {
    @Test("names with underscores, =values, Fire's booleans, Python lists; img2dataset-only options dropped with a warning")
    func translation() {
        // From img2dataset's dataset_examples/cc3m.md, with a few more of its options.
        let command = [
            "--url_list", "cc3m.tsv", "--input_format", "tsv", "--url_col", "url", "--caption_col", "caption", "--output_format",
            "webdataset", "--output_folder", "cc3m", "--processes_count", "16", "--thread_count", "64", "--image_size=256",
            "--enable_wandb", "True", "--resize_only_if_bigger=True", "--skip_reencode", "--extract_exif", "False",
            "--save_additional_columns", #"["license", 'source']"#, "--disallowed_header_directives", "[]", "--timeout=10", "-j", "8",
        ]
        let (arguments, warnings) = Img2datasetArguments.translate(command)
        #expect(
            arguments == [
                "--input", "cc3m.tsv", "--input-format", "tsv", "--url-col", "url", "--caption-col", "caption", "--output-format",
                "webdataset", "--output", "cc3m", "-j", "64", "--image-size", "256", "--resize-only-if-bigger", "--skip-reencode",
                "--no-extract-exif", "--save-additional-columns", "license,source", "--disallowed-header-directives", "",
                "--timeout=10", "-j", "8",
            ])
        #expect(warnings.count == 2 && warnings.allSatisfy { $0.contains("img2dataset's and has no effect here") })
        #expect(
            Img2datasetArguments.translate(["--url_list=a.txt", "--output_folder=out"]).arguments == [
                "--input", "a.txt", "--output", "out", "--output-format", "files",
            ], "img2dataset's default layout is files")
    }
}
