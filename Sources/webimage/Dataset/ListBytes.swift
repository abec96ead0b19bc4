import CZlib
import Foundation

/// The bytes of a list file (or standard input) a block at a time, inflated on the way when they
/// are gzip's (found by gzip's magic bytes, whatever the file's name), so a list of any length
/// is never held whole.
final class ListBytes {
    private let handle: FileHandle
    private let name: String
    private var inflater: Inflater?
    private var pending: [UInt8]?
    private var atEnd = false

    /// Blocks read from the file at a time.
    static let blockSize = 1 << 16

    /// Opens `path`, or standard input for `-`.
    init(path: String) throws {
        name = path == "-" ? "standard input" : path
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw CommandFailure("cannot read \(path)") }
            self.handle = handle
        }
        let first = try read()
        if first.count >= 2, first[0] == 0x1F, first[1] == 0x8B { inflater = try Inflater(name: name) }
        pending = first
    }

    /// The next block of the list's (inflated) bytes; nil at the end.
    func next() throws -> [UInt8]? {
        while !atEnd {
            let raw = try pending.take() ?? read()
            if raw.isEmpty {
                atEnd = true
                try inflater?.finish()
                return nil
            }
            guard let inflater else { return raw }
            let inflated = try inflater.inflate(raw)
            if !inflated.isEmpty { return inflated }
        }
        return nil
    }

    private func read() throws -> [UInt8] {
        do {
            return [UInt8](try handle.read(upToCount: Self.blockSize) ?? Data())
        } catch {
            throw CommandFailure("cannot read \(name): \(error.localizedDescription)")
        }
    }

    /// A gzip stream inflated piece by piece; several gzip members one after another (what
    /// `cat a.gz b.gz` makes) are read as one stream, as gzip itself reads them.
    private final class Inflater {
        private var stream = z_stream()
        private let name: String
        private var inMember = true

        init(name: String) throws {
            self.name = name
            // 15 + 16: a gzip wrapper, the largest window.
            guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                throw CommandFailure("\(name): zlib could not start")
            }
        }

        deinit { inflateEnd(&stream) }

        func inflate(_ input: [UInt8]) throws -> [UInt8] {
            var output: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            try input.withUnsafeBufferPointer { source in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = uInt(source.count)
                while stream.avail_in > 0 {
                    if !inMember {
                        guard inflateReset(&stream) == Z_OK else { throw CommandFailure("\(name): zlib could not restart") }
                        inMember = true
                    }
                    let status = chunk.withUnsafeMutableBufferPointer { buffer -> Int32 in
                        stream.next_out = buffer.baseAddress
                        stream.avail_out = uInt(buffer.count)
                        return CZlib.inflate(&stream, Z_NO_FLUSH)
                    }
                    output.append(contentsOf: chunk[..<(chunk.count - Int(stream.avail_out))])
                    switch status {
                    case Z_STREAM_END: inMember = false
                    case Z_OK, Z_BUF_ERROR: continue
                    default:
                        let reason = stream.msg.map { String(cString: $0) } ?? "status \(status)"
                        throw CommandFailure("\(name): damaged gzip data (\(reason))")
                    }
                }
            }
            stream.next_in = nil
            return output
        }

        /// At the end of the input: a member cut short is an error, not a shorter list.
        func finish() throws {
            if inMember, stream.total_in > 0 || stream.total_out > 0 {
                throw CommandFailure("\(name): the gzip data ends early (a truncated file?)")
            }
        }
    }
}

extension Optional {
    /// The value, leaving nil behind.
    fileprivate mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}
