import Foundation

/// The value and level encodings of Parquet's `Encodings.md`: the RLE / bit-packing hybrid
/// (levels, dictionary indices, booleans), PLAIN for every physical type, DELTA_BINARY_PACKED,
/// DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT. Every count and length is
/// checked against the bytes there are before anything is allocated for it.
enum ParquetEncodings {
    /// The encodings' numbers in `parquet.thrift`.
    static let plain: Int32 = 0
    static let plainDictionary: Int32 = 2
    static let rle: Int32 = 3
    static let deltaBinaryPacked: Int32 = 5
    static let deltaLengthByteArray: Int32 = 6
    static let deltaByteArray: Int32 = 7
    static let rleDictionary: Int32 = 8
    static let byteStreamSplit: Int32 = 9

    /// The most values one page (or one delta run) may hold: pyarrow writes pages of about 1 MiB,
    /// a million short values at the most; a count past this is a damaged or hostile file, not a
    /// reason to allocate gigabytes.
    static let maximumValues = 1 << 24

    /// `count` values of `bitWidth` bits from the RLE / bit-packing hybrid in `bytes`.
    static func hybrid(_ bytes: ArraySlice<UInt8>, bitWidth: Int, count: Int) throws(ParquetError) -> [Int32] {
        guard (0...32).contains(bitWidth) else { throw ParquetError("a bit width of \(bitWidth)") }
        guard count <= maximumValues else { throw ParquetError("a page of \(count) values") }
        var values: [Int32] = []
        values.reserveCapacity(min(count, bytes.count * 8 + 8))
        var offset = bytes.startIndex
        let byteWidth = (bitWidth + 7) / 8
        while values.count < count {
            var header: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard offset < bytes.endIndex, shift < 64 else { throw ParquetError("run-length data ends early") }
                header |= UInt64(bytes[offset] & 0x7F) << shift
                offset += 1
                if bytes[offset - 1] & 0x80 == 0 { break }
                shift += 7
            }
            if header & 1 == 1 {
                // Bit-packed groups of eight, least significant bit first.
                let groups = Int(clamping: header >> 1)
                guard groups <= (bytes.endIndex - offset) / max(bitWidth, 1) + 1 else {
                    throw ParquetError("a bit-packed run is past its page")
                }
                let packed = groups * 8
                let length = groups * bitWidth
                guard bytes.endIndex - offset >= length else { throw ParquetError("a bit-packed run ends early") }
                unpack(bytes[offset..<(offset + length)], bitWidth: bitWidth, count: min(packed, count - values.count), into: &values)
                offset += length
            } else {
                let run = Int(clamping: header >> 1)
                guard bytes.endIndex - offset >= byteWidth else { throw ParquetError("a repeated run ends early") }
                var value: UInt32 = 0
                for index in 0..<byteWidth { value |= UInt32(bytes[offset + index]) << (8 * UInt32(index)) }
                offset += byteWidth
                guard run > 0 else { continue }
                values.append(contentsOf: repeatElement(Int32(bitPattern: value), count: min(run, count - values.count)))
            }
        }
        return values
    }

    /// Unpacks `count` values of `bitWidth` bits, least significant bit first.
    static func unpack(_ bytes: ArraySlice<UInt8>, bitWidth: Int, count: Int, into values: inout [Int32]) {
        guard bitWidth > 0 else {
            values.append(contentsOf: repeatElement(0, count: count))
            return
        }
        var bit = 0
        let base = bytes.startIndex
        for _ in 0..<count {
            var value: UInt64 = 0
            for position in 0..<bitWidth {
                let absolute = bit + position
                let byte = bytes[base + absolute >> 3]
                value |= UInt64((byte >> UInt8(absolute & 7)) & 1) << UInt64(position)
            }
            values.append(Int32(truncatingIfNeeded: value))
            bit += bitWidth
        }
    }

    /// DELTA_BINARY_PACKED integers from `offset`, moving it past them.
    static func deltaBinaryPacked(_ bytes: [UInt8], offset: inout Int) throws(ParquetError) -> [Int64] {
        var reader = ThriftCompactReader(bytes, offset: offset)
        let blockSize = Int(clamping: try reader.varint())
        let miniblocks = Int(clamping: try reader.varint())
        let total = Int(clamping: try reader.varint())
        var previous = try reader.int64()
        // Writers use blocks of 128 values in 4 miniblocks; anything huge is damage (and would
        // overflow the arithmetic below).
        guard blockSize > 0, blockSize <= 1 << 16, blockSize % 128 == 0, miniblocks > 0, blockSize % miniblocks == 0,
            (blockSize / miniblocks) % 32 == 0
        else {
            throw ParquetError("a delta block of \(blockSize) values in \(miniblocks) miniblocks")
        }
        // Each block takes at least its minimum and its widths: a count past what the bytes can
        // hold in blocks is damage.
        guard total <= maximumValues, total <= ((bytes.count - reader.offset) / (1 + miniblocks) + 1) * blockSize else {
            throw ParquetError("a delta run counts more values than its bytes hold")
        }
        var values: [Int64] = total > 0 ? [previous] : []
        values.reserveCapacity(total)
        let perMiniblock = blockSize / miniblocks
        while values.count < total {
            let minimum = try reader.int64()
            var widths: [Int] = []
            for _ in 0..<miniblocks { widths.append(Int(try reader.byte())) }
            for width in widths where values.count < total {
                guard width <= 64 else { throw ParquetError("a delta miniblock of \(width) bits") }
                let length = perMiniblock * width / 8
                guard bytes.count - reader.offset >= length else { throw ParquetError("a delta miniblock ends early") }
                let start = reader.offset
                var bit = 0
                for _ in 0..<perMiniblock where values.count < total {
                    var delta: UInt64 = 0
                    for position in 0..<width {
                        let absolute = bit + position
                        delta |= UInt64((bytes[start + absolute >> 3] >> UInt8(absolute & 7)) & 1) << UInt64(position)
                    }
                    bit += width
                    previous = previous &+ minimum &+ Int64(bitPattern: delta)
                    values.append(previous)
                }
                for _ in 0..<length { _ = try reader.byte() }
            }
        }
        offset = reader.offset
        return values
    }

    /// DELTA_LENGTH_BYTE_ARRAY: the lengths, then the bytes one after another.
    static func deltaLengthByteArrays(_ bytes: [UInt8], offset: inout Int) throws(ParquetError) -> [ArraySlice<UInt8>] {
        let lengths = try deltaBinaryPacked(bytes, offset: &offset)
        var values: [ArraySlice<UInt8>] = []
        values.reserveCapacity(lengths.count)
        for length in lengths {
            guard length >= 0, length <= Int64(bytes.count - offset) else { throw ParquetError("a byte array runs past its page") }
            values.append(bytes[offset..<(offset + Int(length))])
            offset += Int(length)
        }
        return values
    }

    /// DELTA_BYTE_ARRAY: each value the previous one's prefix of the given length, then its suffix.
    static func deltaByteArrays(_ bytes: [UInt8], offset: inout Int) throws(ParquetError) -> [[UInt8]] {
        let prefixes = try deltaBinaryPacked(bytes, offset: &offset)
        let suffixes = try deltaLengthByteArrays(bytes, offset: &offset)
        guard prefixes.count == suffixes.count else { throw ParquetError("a delta byte array's prefixes and suffixes differ in number") }
        var values: [[UInt8]] = []
        values.reserveCapacity(prefixes.count)
        var previous: [UInt8] = []
        for (prefix, suffix) in zip(prefixes, suffixes) {
            guard prefix >= 0, prefix <= Int64(previous.count) else {
                throw ParquetError("a delta byte array's prefix is longer than the value before")
            }
            previous = Array(previous.prefix(Int(prefix))) + suffix
            values.append(previous)
        }
        return values
    }
}
