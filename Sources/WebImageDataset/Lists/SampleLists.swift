import Foundation

/// Several lists read as one, in order, as img2dataset reads its `url_list`: each path a file, or
/// a folder whose lists of the format (`*.csv` and `*.csv.gz` for csv, in name order; a folder of
/// Parquet files stays one ``SampleListReader``) follow each other. Rows are numbered across the
/// lists, so shards and keys run on from one list to the next. Only one list is open at a time.
package final class SampleLists {
    private let format: ListFormat
    private let columns: ListColumns
    private var pending: ArraySlice<String>
    private var current: (path: String, reader: SampleListReader)?
    /// Whether errors name their list (more than one is read).
    private let namesLists: Bool

    /// Opens the first of `paths` (standard input for `-`, which must be alone), so that a missing
    /// column is named before any row is read.
    /// - Throws: ``DatasetError`` for a path that cannot be read, a folder with no list of the
    ///   format, or `-` among others.
    package init(paths: [String], format: ListFormat, columns: ListColumns) throws(DatasetError) {
        guard !paths.isEmpty else { throw DatasetError("no list to read") }
        if paths.count > 1, paths.contains("-") { throw DatasetError("standard input (-) is read alone, not beside other lists") }
        var files: [String] = []
        for path in paths { files += try Self.lists(at: path, format: format) }
        (self.format, self.columns, pending, namesLists) = (format, columns, files[...], files.count > 1)
        try openNext()
    }

    /// The next row of the current list, or of the next one; nil after the last.
    /// - Throws: ``DatasetError`` naming the place (and the list, when there are several).
    package func next() throws(DatasetError) -> ListRow? {
        while let (path, reader) = current {
            do {
                if let row = try reader.next() { return row }
            } catch {
                throw namesLists ? DatasetError("\(path): \(error.description)") : error
            }
            try openNext()
        }
        return nil
    }

    private func openNext() throws(DatasetError) {
        guard let path = pending.popFirst() else {
            current = nil
            return
        }
        do {
            current = (path, try SampleListReader(path: path, format: format, columns: columns))
        } catch {
            throw namesLists ? DatasetError("\(path): \(error.description)") : error
        }
    }

    /// The lists `path` stands for: itself (a file, `-`, a folder of Parquet files), or a
    /// folder's files of `format`, in name order.
    static func lists(at path: String, format: ListFormat) throws(DatasetError) -> [String] {
        var isDirectory: ObjCBool = false
        guard path != "-", FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue,
            format != .parquet, !ParquetRows.isParquet(path: path)
        else { return [path] }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let names = entries.filter { !$0.hasPrefix(".") && ListFormat.holds(format, name: $0) }.sorted()
        guard !names.isEmpty else { throw DatasetError("\(path) holds no .\(format.rawValue) list (nor .\(format.rawValue).gz)") }
        return names.map { (path as NSString).appendingPathComponent($0) }
    }
}

extension ListFormat {
    /// Whether a file `name` holds a list of `format` by its extension (`a.csv`, `a.csv.gz`).
    package static func holds(_ format: ListFormat, name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered.hasSuffix(".\(format.rawValue)") || lowered.hasSuffix(".\(format.rawValue).gz")
    }
}
