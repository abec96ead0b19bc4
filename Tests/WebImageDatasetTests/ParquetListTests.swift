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
        #expect(sniffed.count == 300)
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
        for index in 0..<200 {
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
}
