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
    init(path: String) throws(DatasetError) {
        name = path == "-" ? "standard input" : path
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw DatasetError("cannot read \(path)") }
            self.handle = handle
        }
        let first = try read()
        if first.count >= 2, first[0] == 0x1F, first[1] == 0x8B { inflater = try Inflater(name: name) }
        pending = first
    }

    /// The most inflated bytes one call hands out: a gzip bomb in the list grows as fast as
    /// the reader takes its lines, and the reader drops a line past its record limit, so the
    /// expansion held at once is bounded whatever the ratio.
    static let maximumInflatedBlock = 1 << 18

    /// The next block of the list's (inflated) bytes; nil at the end.
    func next() throws(DatasetError) -> [UInt8]? {
        while !atEnd {
            if let inflater, inflater.hasInput {
                let inflated = try inflater.inflate(limit: Self.maximumInflatedBlock)
                if !inflated.isEmpty { return inflated }
                continue
            }
            let raw: [UInt8]
            if let first = pending.take() { raw = first } else { raw = try read() }
            if raw.isEmpty {
                atEnd = true
                try inflater?.finish()
                return nil
            }
            guard let inflater else { return raw }
            inflater.feed(raw)
        }
        return nil
    }

    private func read() throws(DatasetError) -> [UInt8] {
        do {
            return [UInt8](try handle.read(upToCount: Self.blockSize) ?? Data())
        } catch {
            throw DatasetError("cannot read \(name): \(error.localizedDescription)")
        }
    }

    /// A gzip stream inflated piece by piece; several gzip members one after another (what
    /// `cat a.gz b.gz` makes) are read as one stream, as gzip itself reads them.
    private final class Inflater {
        private var stream = z_stream()
        private let name: String
        private var inMember = true

        init(name: String) throws(DatasetError) {
            self.name = name
            // 15 + 16: a gzip wrapper, the largest window.
            guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                throw DatasetError("\(name): zlib could not start")
            }
        }

        deinit { inflateEnd(&stream) }

        /// Compressed bytes not inflated yet, from `offset`.
        private var input: [UInt8] = []
        private var offset = 0

        var hasInput: Bool { offset < input.count }

        func feed(_ bytes: [UInt8]) {
            input = bytes
            offset = 0
        }

        /// Inflates what was fed until `limit` bytes are out (or a little past: one chunk) or the
        /// input is used up.
        func inflate(limit: Int) throws(DatasetError) -> [UInt8] {
            var output: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            try input.withUnsafeBufferPointer { source throws(DatasetError) in
                while offset < source.count, output.count < limit {
                    if !inMember {
                        guard inflateReset(&stream) == Z_OK else { throw DatasetError("\(name): zlib could not restart") }
                        inMember = true
                    }
                    stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress! + offset)
                    stream.avail_in = uInt(source.count - offset)
                    let status = chunk.withUnsafeMutableBufferPointer { buffer -> Int32 in
                        stream.next_out = buffer.baseAddress
                        stream.avail_out = uInt(buffer.count)
                        return CZlib.inflate(&stream, Z_NO_FLUSH)
                    }
                    let before = offset
                    offset = source.count - Int(stream.avail_in)
                    let produced = chunk.count - Int(stream.avail_out)
                    output.append(contentsOf: chunk[..<produced])
                    switch status {
                    case Z_STREAM_END: inMember = false
                    case Z_OK: continue
                    case Z_BUF_ERROR where offset > before || produced > 0: continue
                    default:
                        let reason = stream.msg.map { String(cString: $0) } ?? "status \(status)"
                        throw DatasetError("\(name): damaged gzip data (\(reason))")
                    }
                }
            }
            stream.next_in = nil
            return output
        }

        /// At the end of the input: a member cut short is an error, not a shorter list.
        func finish() throws(DatasetError) {
            if inMember, stream.total_in > 0 || stream.total_out > 0 {
                throw DatasetError("\(name): the gzip data ends early (a truncated file?)")
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
