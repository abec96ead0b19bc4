import Foundation

/// The rows of a Parquet list, a row group at a time and only the columns a run reads: a file,
/// or a folder whose `.parquet` files (`part-00000.parquet`, ...) are one list in name order.
/// Memory holds one row group's columns, whatever the list's length. A file that is cut, damaged
/// or not Parquet is an error naming it and what is wrong.
final class ParquetRows {
    private var files: [String]
    private let wanted: [String]
    private var file: FileHandle?
    private var fileName = ""
    private var fileSize: Int64 = 0
    private var metadata: ParquetMetadata?
    private var schema: ParquetSchema?
    private var group = 0
    /// The current row group's values, by column name, and the next row's index in them.
    private var columns: [String: [JSONValue]] = [:]
    private var rowCount = 0
    private var row = 0

    /// The top-level columns of the first file, for a missing column's message.
    private(set) var names: [String] = []

    /// The footer's most bytes: LAION's and DataComp's footers are tens of kilobytes.
    static let maximumFooterBytes = 64 << 20
    static let magic: [UInt8] = Array("PAR1".utf8)

    /// Whether `path` is a folder holding `.parquet` files or a file that starts with Parquet's magic.
    static func isParquet(path: String) -> Bool {
        var isDirectory: ObjCBool = false
        guard path != "-", FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return false }
        if isDirectory.boolValue { return !parquetFiles(in: path).isEmpty }
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 4)).map { [UInt8]($0) == magic } ?? false
    }

    /// The `.parquet` files of a folder, in name order.
    static func parquetFiles(in folder: String) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return entries.filter { $0.hasSuffix(".parquet") && !$0.hasPrefix(".") }.sorted().map { folder + "/" + $0 }
    }

    /// Opens `path` (a file or a folder of them) for the columns `wanted`.
    init(path: String, wanted: [String]) throws(DatasetError) {
        guard path != "-" else { throw DatasetError("a Parquet list is read from a file or a folder, not standard input") }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw DatasetError("cannot read \(path)") }
        if isDirectory.boolValue {
            files = Self.parquetFiles(in: path)
            guard !files.isEmpty else { throw DatasetError("\(path) holds no .parquet file") }
        } else {
            files = [path]
        }
        self.wanted = wanted
        try openNext()
        names = schema?.names ?? []
    }

    /// The next row's wanted columns, or nil at the end of the last file.
    func next() throws(DatasetError) -> [String: JSONValue]? {
        while row >= rowCount {
            guard try loadNextGroup() else { return nil }
        }
        defer { row += 1 }
        return columns.mapValues { $0[row] }
    }

    /// Reads the next row group, opening the next file when this one is done; false at the end.
    private func loadNextGroup() throws(DatasetError) -> Bool {
        while true {
            if let metadata, group < metadata.rowGroups.count {
                try read(metadata.rowGroups[group])
                group += 1
                return true
            }
            guard !files.isEmpty else { return false }
            try openNext()
        }
    }

    private func openNext() throws(DatasetError) {
        try? file?.close()
        let path = files.removeFirst()
        fileName = path
        guard let handle = FileHandle(forReadingAtPath: path) else { throw DatasetError("cannot read \(path)") }
        file = handle
        do {
            fileSize = Int64(try handle.seekToEnd())
            let footer = try footer(handle)
            let metadata = try ParquetMetadata(footer)
            schema = try ParquetSchema(metadata.schema)
            self.metadata = metadata
        } catch let error as ParquetError {
            throw failure(error)
        } catch {
            throw DatasetError("\(path): cannot be read (\(error.localizedDescription))")
        }
        group = 0
    }

    /// The footer's bytes: the file ends with their length and `PAR1`, and starts with `PAR1`.
    private func footer(_ handle: FileHandle) throws -> [UInt8] {
        guard fileSize >= 12 else { throw ParquetError("it is too short to be Parquet (\(fileSize) bytes)") }
        try handle.seek(toOffset: 0)
        guard [UInt8](try handle.read(upToCount: 4) ?? Data()) == Self.magic else {
            throw ParquetError("it does not start with PAR1: not a Parquet file")
        }
        try handle.seek(toOffset: UInt64(fileSize - 8))
        let tail = [UInt8](try handle.read(upToCount: 8) ?? Data())
        guard tail.count == 8, Array(tail[4...]) == Self.magic else {
            throw ParquetError("it does not end with PAR1: cut short, or not Parquet")
        }
        let length = Int64(UInt32(tail[0]) | UInt32(tail[1]) << 8 | UInt32(tail[2]) << 16 | UInt32(tail[3]) << 24)
        guard length <= fileSize - 12, length <= Self.maximumFooterBytes else {
            throw ParquetError("its footer's length (\(length) bytes) is past its size")
        }
        try handle.seek(toOffset: UInt64(fileSize - 8 - length))
        let footer = [UInt8](try handle.read(upToCount: Int(length)) ?? Data())
        guard footer.count == Int(length) else { throw ParquetError("its footer is cut short") }
        return footer
    }

    /// Decodes the wanted columns of `group`.
    private func read(_ group: ParquetMetadata.RowGroup) throws(DatasetError) {
        guard let schema, let file else { return }
        guard group.rowCount >= 0, group.rowCount <= Int64(ParquetEncodings.maximumValues) * 16 else {
            throw failure(ParquetError("a row group of \(group.rowCount) rows"))
        }
        let rows = Int(group.rowCount)
        var columns: [String: [JSONValue]] = [:]
        do {
            for name in wanted where columns[name] == nil {
                let leaf = try schema.leaf(name)
                guard let chunk = group.columns.first(where: { $0.path == leaf.path }) else {
                    throw ParquetError("a row group has no chunk for its column \(name)")
                }
                // Compared without adding: offsets near Int64's end would overflow.
                guard chunk.start >= 4, chunk.start <= fileSize, chunk.compressedSize >= 0,
                    chunk.compressedSize <= fileSize - 8 - chunk.start
                else {
                    throw ParquetError("the chunk of \(name) lies outside the file")
                }
                try file.seek(toOffset: UInt64(chunk.start))
                let bytes = [UInt8](try file.read(upToCount: Int(chunk.compressedSize)) ?? Data())
                guard bytes.count == Int(chunk.compressedSize) else { throw ParquetError("the chunk of \(name) is cut short") }
                let column = try ParquetColumn(bytes, leaf: leaf, codec: chunk.codec, valueCount: chunk.valueCount)
                columns[name] = try column.values(rows: rows)
            }
        } catch let error as ParquetError {
            throw failure(error)
        } catch {
            throw DatasetError("\(fileName): cannot be read (\(error.localizedDescription))")
        }
        self.columns = columns
        rowCount = rows
        row = 0
    }

    private func failure(_ error: ParquetError) -> DatasetError {
        DatasetError("\(fileName): \(error.description)")
    }
}
