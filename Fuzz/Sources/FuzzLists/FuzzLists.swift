import Foundation
@testable import WebImageDataset

/// The list file every input is written to: the reader reads a path, as `prefetch -i` gives it.
private let listPath = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-list-\(getpid())").path

/// libFuzzer entry point for the caption-list reader (`SampleListReader`): the first byte picks
/// the format and the columns, the rest is the list, gzip-compressed when it starts with gzip's
/// magic. Every input must end in rows or a `DatasetError`, in time linear in its length (a
/// quadratic rescan shows as a libFuzzer timeout); a trap is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let selector = Int(bytes[0])
    let formats = ListFormat.allCases
    let format = formats[selector % formats.count]
    let columns =
        selector & 0x80 != 0
        ? ListColumns(url: "url", caption: "caption", hash: "sha256", additional: ["width", "url"])
        : ListColumns()
    guard FileManager.default.createFile(atPath: listPath, contents: Data(UnsafeBufferPointer(start: bytes + 1, count: count - 1)))
    else { return 0 }
    guard let reader = try? SampleListReader(path: listPath, format: format, columns: columns) else { return 0 }
    var rows = 0
    while rows < 100_000, let row = try? reader.next() {
        precondition(row.malformed != nil || row.url.utf8.count <= SampleListReader.maximumRecordBytes + 1)
        rows += 1
    }
    return 0
}
