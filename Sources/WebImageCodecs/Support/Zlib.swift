import CZlib
import Foundation

/// zlib streams (PNG's `iCCP` profile) in and out of memory.
enum Zlib {
    /// The inflated bytes, or nil when the stream is damaged, incomplete or inflates past `limit`.
    static func inflate(_ compressed: UnsafeRawBufferPointer, limit: Int) -> Data? {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        stream.next_in = UnsafeMutablePointer(mutating: compressed.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(compressed.count)
        while true {
            let status = chunk.withUnsafeMutableBufferPointer { buffer -> Int32 in
                stream.next_out = buffer.baseAddress
                stream.avail_out = uInt(buffer.count)
                return CZlib.inflate(&stream, Z_NO_FLUSH)
            }
            output.append(contentsOf: chunk[..<(chunk.count - Int(stream.avail_out))])
            guard output.count <= limit else { return nil }
            if status == Z_STREAM_END { return output }
            // No progress with input left, or an error: the stream cannot complete.
            guard status == Z_OK, stream.avail_in > 0 || stream.avail_out == 0 else { return nil }
        }
    }

    /// `bytes` deflated at the default level.
    static func deflate(_ bytes: Data) -> Data {
        var size = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(size))
        let status = bytes.withUnsafeBytes { input in
            compress(&output, &size, input.baseAddress?.assumingMemoryBound(to: Bytef.self), uLong(bytes.count))
        }
        precondition(status == Z_OK, "zlib's compress cannot fail with a buffer of compressBound's size")
        return Data(output[..<Int(size)])
    }
}
