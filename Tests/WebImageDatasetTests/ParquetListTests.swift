import Foundation
import Testing
import WebImageTesting
import WebImageTestSupport

@testable import WebImageDataset

/// Parquet lists read natively (issue 58), checked against pyarrow: `make_parquet.py` writes every
/// combination of codec, page version, dictionary and value encoding with every physical type,
/// nulls and DataComp's nested face boxes, and the rows as pyarrow reads them back; each file's
/// rows here must be those.
@Suite("Parquet lists against pyarrow", .serialized)
struct ParquetListTests {
    /// The files and pyarrow's rows, written once for the suite (by the test kit's child process:
    /// Foundation's Process leaks a weak reference that LeakSanitizer reports).
    static let written = Task {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parquet-\(UUID().uuidString)")
        let script = try #require(Bundle.module.url(forResource: "make_parquet", withExtension: "py"))
        let python = TestPython.command
        let status = try await ChildProcess(python.executable, python.arguments + [script.path, folder.path]).waitForExit()
        guard status.status == 0 else {
            throw DatasetError("make_parquet.py failed: does the tests' Python have pyarrow? (scripts/python-deps.sh)")
        }
        return folder
    }

    static let additional = [
        "URL", "uid", "original_width", "original_height", "similarity", "pwatermark", "nsfw", "sha256", "key", "face_bboxes", "tags",
    ]

    /// Every row of `path` with the url and TEXT columns and the rest as additional ones.
    private func rows(_ path: String, format: ListFormat = .parquet) throws -> [ListRow] {
        let reader = try SampleListReader(
            path: path, format: format, columns: ListColumns(url: "url", caption: "TEXT", additional: Self.additional))
        var rows: [ListRow] = []
        while let row = try reader.next() { rows.append(row) }
        return rows
    }

    /// Compares our rows with pyarrow's, column by column.
    private func expectMatches(_ rows: [ListRow], expected file: URL, _ name: String) throws {
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        #expect(rows.count == lines.count, "\(name): \(rows.count) rows, pyarrow \(lines.count)")
        for (row, line) in zip(rows, lines) {
            let expected = try JSONParser.parse(Array(line.utf8))
            #expect(row.url == (expected["url"]?.text ?? ""), "\(name)")
            #expect(row.caption == expected["TEXT"]?.text, "\(name)")
            for member in row.columns {
                let want = expected[member.name] ?? .null
                #expect(Self.same(member.value, want), "\(name) \(member.name): \(member.value.serialized()) vs \(want.serialized())")
            }
        }
    }

    /// Equal values, a whole number written as a float by JSON (`1.0`) equal to our double.
    static func same(_ left: JSONValue, _ right: JSONValue) -> Bool {
        switch (left, right) {
        case (.number(let a), .integer(let b)), (.integer(let b), .number(let a)): return a == Double(b)
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
        default: return left == right
        }
    }

    @Test("every codec, page version and dictionary choice: the rows pyarrow reads")
    func combinations() async throws {
        let folder = try await Self.written.value
        let names = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("names.json"))) as? [String] ?? []
        #expect(names.count == 19)
        for name in names {
            let rows = try rows(folder.appendingPathComponent(name + ".parquet").path)
            try expectMatches(rows, expected: folder.appendingPathComponent(name + ".expected.jsonl"), name)
        }
    }

    @Test("a folder of part files is one list in name order; a Parquet file is found by its bytes whatever --input-format says")
    func folderAndMagic() async throws {
        let folder = try await Self.written.value
        try expectMatches(
            rows(folder.appendingPathComponent("parts").path), expected: folder.appendingPathComponent("parts.expected.jsonl"), "parts")
        let sniffed = try rows(folder.appendingPathComponent("zstd-v2-dict.parquet").path, format: .csv)
        #expect(sniffed.count == 200)
    }

    @Test("DataComp's face boxes keep their nesting: null, empty, an empty box list inside, null boxes")
    func nestedBoxes() async throws {
        let folder = try await Self.written.value
        let rows = try rows(folder.appendingPathComponent("snappy-v1-dict.parquet").path)
        func boxes(_ index: Int) -> JSONValue { rows[index].columns.first { $0.name == "face_bboxes" }?.value ?? .null }
        #expect(boxes(0) == .null && boxes(7) == .array([]))
        #expect(boxes(13) == .array([.array([.number(0.1), .number(0.2), .number(0.3), .number(0.4)]), .null, .array([])]))
        #expect(boxes(2) == .array(Array(repeating: .array([.number(0.002), .number(0.25), .number(0.5002), .number(0.75)]), count: 2)))
    }

    @Test("a schema counting fewer than no fields, or more than it lists, is an error (FuzzLists found the first trapping)")
    func damagedSchema() {
        var root = ParquetMetadata.SchemaElement()
        root.childCount = -3
        #expect(throws: ParquetError.self) { try ParquetSchema([root]) }
        root.childCount = 40
        #expect(throws: ParquetError.self) { try ParquetSchema([root]) }
    }

    @Test("a missing column is named with the file's columns; a cut, garbled or foreign file is an error naming it, never a crash")
    func damagedFiles() async throws {
        let folder = try await Self.written.value
        let source = folder.appendingPathComponent("snappy-v1-dict.parquet")
        let missing = #expect(throws: DatasetError.self) {
            _ = try SampleListReader(path: source.path, format: .parquet, columns: ListColumns(url: "link"))
        }
        #expect(missing?.description.contains("no column \"link\"") == true && missing?.description.contains("face_bboxes") == true)
        let bytes = try [UInt8](Data(contentsOf: source))
        var random = SplitMix64(seed: 58)
        var variants: [(String, [UInt8])] = [
            ("cut", Array(bytes.prefix(bytes.count / 2))), ("tail", Array(bytes.dropLast(3))), ("empty", Array("PAR1".utf8)),
        ]
        // Fewer under a sanitizer, whose instrumented decode is ten times slower, beside the suites
        // that run at the same time.
        for index in 0..<(Sanitizer.isActive ? 50 : 200) {
            var garbled = bytes
            for _ in 0..<(1 + index % 8) { garbled[Int(random.next() % UInt64(garbled.count))] = UInt8(truncatingIfNeeded: random.next()) }
            variants.append(("garbled \(index)", garbled))
        }
        let damaged = folder.appendingPathComponent("damaged.parquet")
        var refused = 0
        for (name, variant) in variants {
            try Data(variant).write(to: damaged)
            do {
                _ = try rows(damaged.path)
            } catch let error as DatasetError {
                refused += 1
                #expect(error.description.hasPrefix(damaged.path + ": ") || error.description.contains("no column"), "\(name): \(error)")
            }
        }
        #expect(refused >= 3, "the cut copies at least")
    }

    /// Records as a dataset shard has them: img2dataset's fields, nulls, a saved list column.
    static let records: [JSONValue] = (0..<300).map(record)

    static func record(_ index: Int) -> JSONValue {
        let failed = index % 5 == 0
        let box: JSONValue = .array([.number(0.1), .number(0.5), .integer(1), .number(0.75)])
        let nsfw: JSONValue = index % 4 == 0 ? .null : .bool(index % 2 == 0)
        var members: [JSONValue.Member] = []
        members.append(.init(name: "face_bboxes", value: index % 3 == 0 ? .null : .array([box])))
        members.append(.init(name: "caption", value: index % 7 == 0 ? .null : .string("caption \(index) ☕ \"quoted\"")))
        members.append(.init(name: "url", value: .string("http://a.test/\(index).jpg")))
        members.append(.init(name: "key", value: .string(String(format: "%09d", index))))
        members.append(.init(name: "status", value: .string(failed ? "failed_to_download" : "success")))
        members.append(.init(name: "error_message", value: failed ? .string("the source answered 404") : .null))
        members.append(.init(name: "width", value: failed ? .null : .integer(256)))
        members.append(.init(name: "original_width", value: failed ? .null : .integer(1000 + Int64(index))))
        members.append(.init(name: "similarity", value: .number(Double(index) / 7)))
        members.append(.init(name: "nsfw", value: nsfw))
        members.append(.init(name: "sha256", value: .string(String(repeating: "ab", count: 32))))
        return .object(members)
    }

    @Test("issue 58: a shard's table written as Parquet reads back here and in pyarrow with img2dataset's types")
    func tableRoundTrip() async throws {
        let directory = try TemporaryDirectory("parquet-table")
        let path = directory.path + "/00000.parquet"
        try ParquetTableWriter.table(Self.records).write(to: URL(fileURLWithPath: path))
        // Read back here: every column as written, lists as their JSON text.
        let reader = try SampleListReader(
            path: path, format: .parquet,
            columns: ListColumns(url: "url", caption: "caption", additional: ["face_bboxes", "width", "nsfw", "similarity"]))
        var rows: [ListRow] = []
        while let row = try reader.next() { rows.append(row) }
        #expect(rows.count == 300 && rows[7].caption == nil && rows[1].caption == "caption 1 ☕ \"quoted\"")
        #expect(rows[1].columns[0].value == .string("[[0.1, 0.5, 1, 0.75]]") && rows[0].columns[0].value == .null)
        #expect(rows[1].columns[1].value == .integer(256) && rows[5].columns[1].value == .null)
        #expect(rows[2].columns[2].value == .bool(true) && rows[3].columns[2].value == .bool(false) && rows[4].columns[2].value == .null)
        #expect(rows[3].columns[3].value == .number(3.0 / 7))
        // And by pyarrow, img2dataset's reader.
        let script = try #require(Bundle.module.url(forResource: "read_parquet", withExtension: "py"))
        let python = TestPython.command
        let process = try ChildProcess(python.executable, python.arguments + [script.path, path])
        #expect(try await process.waitForExit().status == 0)
        let output = try JSONParser.parse(Array((process.lines.last ?? "").utf8))
        #expect(output["schema"]?["width"] == .string("int32") && output["schema"]?["original_width"] == .string("int32"))
        #expect(output["schema"]?["similarity"] == .string("double") && output["schema"]?["nsfw"] == .string("bool"))
        #expect(output["schema"]?["caption"] == .string("string") && output["schema"]?["error_message"] == .string("string"))
        guard case .array(let read)? = output["rows"] else {
            Issue.record("no rows from pyarrow")
            return
        }
        #expect(read.count == 300)
        for (index, row) in read.enumerated() {
            guard case .object(let expected) = Self.records[index] else { continue }
            for member in expected {
                let value = member.value
                let want: JSONValue = if case .array = value { .string(value.serialized()) } else { value }
                #expect(Self.same(row[member.name] ?? .null, want), "row \(index) \(member.name)")
            }
        }
    }
}
