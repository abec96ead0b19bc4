package import Foundation

/// POSIX ustar, member after member: what Python's `tarfile`, GNU tar and the webdataset loaders
/// read. Names are at most 100 bytes (a dataset's keys are short). The bytes only: a
/// ``TarWriter`` puts them in a file, a bucket's shard in the parts of an upload.
package enum TarFormat {
    /// The two zero blocks that end an archive. Made when asked for: a global `Data` is reported
    /// by LeakSanitizer at exit.
    package static var end: Data { Data(count: 1024) }

    /// A regular file member: its header, its bytes, the zeros to the next 512-byte block.
    package static func append(name: String, data: Data, modified: Int, to archive: inout Data) throws {
        archive.append(try header(name: name, size: data.count, modified: modified))
        archive.append(data)
        // Zeros to the end of the member's last 512-byte block.
        archive.append(Data(count: (512 - data.count % 512) % 512))
    }

    /// A 512-byte ustar header: octal fields, the checksum over the header with its own field
    /// counted as spaces.
    package static func header(name: String, size: Int, modified: Int) throws -> Data {
        let nameBytes = Array(name.utf8)
        guard nameBytes.count <= 100 else { throw DatasetError("tar member name over 100 bytes: \(name)") }
        var block = [UInt8](repeating: 0, count: 512)
        func put(_ bytes: [UInt8], at offset: Int) {
            for (index, byte) in bytes.enumerated() { block[offset + index] = byte }
        }
        func octal(_ value: Int, width: Int) -> [UInt8] {
            Array(String(value, radix: 8).leftPadded(to: width - 1).utf8) + [0]
        }
        put(nameBytes, at: 0)
        put(octal(0o644, width: 8), at: 100)
        put(octal(0, width: 8), at: 108)
        put(octal(0, width: 8), at: 116)
        put(octal(size, width: 12), at: 124)
        put(octal(modified, width: 12), at: 136)
        put([UInt8](repeating: 0x20, count: 8), at: 148)
        block[156] = UInt8(ascii: "0")
        put(Array("ustar".utf8) + [0], at: 257)
        put(Array("00".utf8), at: 263)
        let checksum = block.reduce(0) { $0 + Int($1) }
        put(Array(String(checksum, radix: 8).leftPadded(to: 6).utf8) + [0, 0x20], at: 148)
        return Data(block)
    }
}

/// Writes a ustar archive to a file, member after member.
package final class TarWriter {
    private let handle: FileHandle
    private let modified: Int

    /// Creates (or truncates) the archive at `path`.
    package init(path: String, modified: Date = Date()) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw DatasetError("cannot create \(path)") }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        self.modified = Int(modified.timeIntervalSince1970)
    }

    /// Appends regular file members (a sample's files) in one write.
    package func append(_ members: [DatasetMember]) throws {
        var bytes = Data(capacity: members.reduce(0) { $0 + 512 + ($1.data.count + 511) / 512 * 512 })
        for member in members { try TarFormat.append(name: member.name, data: member.data, modified: modified, to: &bytes) }
        try handle.write(contentsOf: bytes)
    }

    /// Writes the end-of-archive blocks, flushes to the disk and closes.
    package func finish() throws {
        try handle.write(contentsOf: TarFormat.end)
        try handle.synchronize()
        try handle.close()
    }

    /// Closes without finishing (the archive is abandoned).
    package func abandon() {
        try? handle.close()
    }
}
