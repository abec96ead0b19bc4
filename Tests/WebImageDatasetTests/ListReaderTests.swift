import Foundation
import Testing
import WebImageTesting
import WebImageTestSupport

@testable import WebImageDataset

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

        #expect(throws: DatasetError.self) { try self.rows(try write("url\n\"http://a.test/open.jpg\n"), .csv) }
        let missing = #expect(throws: DatasetError.self) { try self.rows(try write("link,text\nhttp://a.test/1.jpg,x\n"), .csv) }
        #expect(missing?.description.contains("no column \"url\"") == true)
        #expect(throws: DatasetError.self) { try self.rows(try write(""), .csv) }
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
        #expect(throws: DatasetError.self) { try self.rows(try write("{\"url\": \"http://a.test/1.jpg\"}\n{\"url\": \n"), .jsonl) }
        #expect(throws: DatasetError.self) { try self.rows(try write("[{\"url\": \"http://a.test/1.jpg\"} {\"url\": \"x\"}]"), .json) }
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
        #expect(throws: DatasetError.self) { try self.rows(plain + ".cut.gz", .txt) }
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

    @Test("the list reader: lines and records past the limit become rows, the bytes between are never held; gzip bombs expand as read")
    func readerBounds() async throws {
        let directory = try TemporaryDirectory("lists")
        let path = directory.path + "/list.txt"
        let body = "http://a/1\n" + String(repeating: "x", count: 2 << 20) + "\nhttp://a/2\n"
        try body.write(toFile: path, atomically: true, encoding: .utf8)
        let reader = try SampleListReader(path: path, format: .txt, columns: ListColumns())
        var rows: [ListRow] = []
        while let row = try reader.next() { rows.append(row) }
        #expect(rows.map { $0.malformed == nil } == [true, false, true])
        #expect(rows[1].url.utf8.count == ListRow.maximumShownURLBytes && rows[2].url == "http://a/2")

        // A CSV record whose quoted caption runs for megabytes, then a normal one.
        let csvPath = directory.path + "/list.csv"
        let csv = "url,caption\nhttp://a/1,\"" + String(repeating: "y,\n", count: 1 << 19) + "\"\nhttp://a/2,z\n"
        try csv.write(toFile: csvPath, atomically: true, encoding: .utf8)
        let records = try SampleListReader(path: csvPath, format: .csv, columns: ListColumns(caption: "caption"))
        var csvRows: [ListRow] = []
        while let row = try records.next() { csvRows.append(row) }
        #expect(csvRows.count == 2 && csvRows[0].malformed?.contains("record 2") == true && csvRows[1].caption == "z")

        // 64 MB of one line, gzip-compressed to about 64 KB: each block handed out is bounded.
        let raw = directory.path + "/bomb.txt"
        let gzipPath = raw + ".gz"
        _ = FileManager.default.createFile(atPath: raw, contents: Data(repeating: UInt8(ascii: "z"), count: 64 << 20))
        // The test kit's child process: Foundation's Process leaks a weak reference LeakSanitizer reports.
        #expect(try await ChildProcess(URL(fileURLWithPath: "/bin/gzip"), ["-9", raw]).waitForExit().status == 0)
        let bytes = try ListBytes(path: gzipPath)
        var largest = 0
        var total = 0
        while let block = try bytes.next() {
            largest = max(largest, block.count)
            total += block.count
        }
        #expect(total == 64 << 20 && largest <= ListBytes.maximumInflatedBlock + (1 << 16), "\(largest)")
    }

}
