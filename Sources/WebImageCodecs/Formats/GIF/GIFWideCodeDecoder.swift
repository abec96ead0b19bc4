/// The LZW image data of a GIF frame whose minimum code size is 9 to 11, which giflib refuses
/// (the GIF89a specification allows at most 8) and browsers and Pillow decode: codes still take
/// at most 12 bits, so only the first code width and the literal codes differ. A literal value
/// over 255 is kept in its low byte, as both do.
///
/// Written from the specification's description of the variable-length-code LZW GIF uses
/// (GIF89a, appendix F): a clear code resets the table, the end code ends the data, each code
/// after the first adds the previous string plus the first byte of the current one, and the
/// width grows by a bit when the table fills it, up to 12.
struct GIFWideCodeDecoder {
    /// What decoding one frame's data gave.
    struct Outcome {
        /// A palette index per pixel in the order stored (interlaced rows as stored).
        var indices: [UInt8]
        /// How many pixels the data filled; fewer than asked when it ended early or went wrong.
        var decodedPixels: Int
        /// Where the frame's data ends (after its block terminator), or nil when the bytes ran
        /// out before it.
        var end: Int?
    }

    private static let maximumWidth = 12
    private static let tableSize = 1 << maximumWidth

    /// Decodes the sub-blocks that start at `offset` in `bytes` into `pixelCount` indices.
    static func decode(_ bytes: UnsafeRawBufferPointer, from offset: Int, minimumCodeSize: Int, pixelCount: Int) -> Outcome {
        var blocks = SubBlockBits(bytes, offset: offset)
        var outcome = Outcome(indices: [UInt8](repeating: 0, count: pixelCount), decodedPixels: 0, end: nil)
        let clear = 1 << minimumCodeSize
        let endCode = clear + 1
        var prefix = [Int](repeating: -1, count: tableSize)
        var suffix = [UInt8](repeating: 0, count: tableSize)
        var first = [UInt8](repeating: 0, count: tableSize)
        for code in 0..<min(clear, tableSize) {
            suffix[code] = UInt8(truncatingIfNeeded: code)
            first[code] = suffix[code]
        }
        var width = minimumCodeSize + 1
        var next = clear + 2
        var previous = -1
        var string = [UInt8](repeating: 0, count: tableSize)
        decoding: while outcome.decodedPixels < pixelCount, let code = blocks.read(width) {
            switch code {
            case clear:
                width = minimumCodeSize + 1
                next = clear + 2
                previous = -1
                continue
            case endCode:
                break decoding
            default:
                break
            }
            // A code not yet in the table can only be the one being made (the "KwKwK" case).
            guard code < next || (code == next && previous >= 0) else { break decoding }
            if previous >= 0, next < tableSize {
                prefix[next] = previous
                suffix[next] = code < next ? first[code] : first[previous]
                first[next] = first[previous]
                next += 1
                if next == 1 << width, width < maximumWidth { width += 1 }
            } else if previous < 0, code >= clear {
                break decoding  // the first code after a clear must be a literal
            }
            var length = 0
            var cursor = code
            while cursor >= 0, length < tableSize {
                string[length] = suffix[cursor]
                length += 1
                cursor = prefix[cursor]
            }
            for index in stride(from: length - 1, through: 0, by: -1) where outcome.decodedPixels < pixelCount {
                outcome.indices[outcome.decodedPixels] = string[index]
                outcome.decodedPixels += 1
            }
            previous = code
        }
        outcome.end = blocks.skipToTerminator()
        return outcome
    }

    /// The bits of a run of GIF data sub-blocks (a length byte, then that many bytes; a zero
    /// length ends the run), least significant bit first across block boundaries.
    private struct SubBlockBits {
        let bytes: UnsafeRawBufferPointer
        /// The next byte to read, and the end of the current block.
        var position: Int
        var blockEnd: Int
        var buffer = 0
        var buffered = 0
        var ended = false

        init(_ bytes: UnsafeRawBufferPointer, offset: Int) {
            self.bytes = bytes
            position = offset
            blockEnd = offset
        }

        mutating func read(_ width: Int) -> Int? {
            while buffered < width {
                guard let byte = nextByte() else { return nil }
                buffer |= Int(byte) << buffered
                buffered += 8
            }
            let code = buffer & ((1 << width) - 1)
            buffer >>= width
            buffered -= width
            return code
        }

        private mutating func nextByte() -> UInt8? {
            while position == blockEnd {
                guard !ended, position < bytes.count else { return nil }
                let length = Int(bytes[position])
                position += 1
                blockEnd = position + length
                if length == 0 {
                    ended = true
                    return nil
                }
                guard blockEnd <= bytes.count else {
                    blockEnd = bytes.count
                    break
                }
            }
            guard position < blockEnd else { return nil }
            defer { position += 1 }
            return bytes[position]
        }

        /// Skips what is left of the data; where it ends after its terminator, or nil when the
        /// bytes run out first.
        mutating func skipToTerminator() -> Int? {
            if ended { return position }
            position = max(position, blockEnd)
            while position < bytes.count {
                let length = Int(bytes[position])
                position += 1 + length
                if length == 0 { return position }
            }
            return nil
        }
    }
}
