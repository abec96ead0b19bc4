import CSnappy
import CZlib
import CZstd

/// The page codecs a list reader meets: none, Snappy (pyarrow's default), gzip and Zstandard,
/// through Debian's libsnappy, zlib and libzstd. A page inflates to exactly the size its header
/// says, which is bounded before anything is allocated.
enum ParquetCodecs {
    /// The largest page inflated: pyarrow writes pages of about 1 MiB.
    static let maximumPageBytes = 256 << 20

    static func decompress(_ bytes: ArraySlice<UInt8>, codec: ParquetMetadata.Codec, size: Int) throws(ParquetError) -> [UInt8] {
        guard size <= maximumPageBytes else { throw ParquetError("a page inflates to \(size) bytes, over \(maximumPageBytes)") }
        switch codec {
        case .uncompressed:
            guard bytes.count == size else { throw ParquetError("an uncompressed page of \(bytes.count) bytes says it has \(size)") }
            return Array(bytes)
        case .snappy: return try snappy(Array(bytes), size: size)
        case .gzip: return try gzip(Array(bytes), size: size)
        case .zstd: return try zstd(Array(bytes), size: size)
        case .lzo, .brotli, .lz4, .lz4Raw:
            throw ParquetError("its pages are compressed with \(codec), which is not read (uncompressed, snappy, gzip, zstd are)")
        }
    }

    private static func snappy(_ input: [UInt8], size: Int) throws(ParquetError) -> [UInt8] {
        var expected = 0
        let known = input.withUnsafeBufferPointer { source in
            source.withMemoryRebound(to: CChar.self) { snappy_uncompressed_length($0.baseAddress, source.count, &expected) }
        }
        guard known == SNAPPY_OK, expected == size else { throw ParquetError("a snappy page is damaged or not the size its header says") }
        var output = [UInt8](repeating: 0, count: size)
        var length = size
        let status = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                source.withMemoryRebound(to: CChar.self) { source in
                    target.withMemoryRebound(to: CChar.self) {
                        snappy_uncompress(source.baseAddress, source.count, $0.baseAddress, &length)
                    }
                }
            }
        }
        guard status == SNAPPY_OK, length == size else { throw ParquetError("a snappy page is damaged") }
        return output
    }

    private static func zstd(_ input: [UInt8], size: Int) throws(ParquetError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: max(size, 1))
        let result = input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { target in ZSTD_decompress(target.baseAddress, size, source.baseAddress, source.count) }
        }
        guard ZSTD_isError(result) == 0, result == size else {
            throw ParquetError("a zstd page is damaged or not the size its header says")
        }
        output.removeLast(output.count - size)
        return output
    }

    private static func gzip(_ input: [UInt8], size: Int) throws(ParquetError) -> [UInt8] {
        var stream = z_stream()
        // 15 + 32: gzip or zlib, found by its header.
        guard inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw ParquetError("zlib could not start")
        }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: size + 1)
        let status = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = uInt(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                return inflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END, Int(stream.total_out) == size else {
            throw ParquetError("a gzip page is damaged or not the size its header says")
        }
        output.removeLast()
        return output
    }
}
