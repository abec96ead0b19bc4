import CGIF
import Foundation

/// A GIF read record by record with giflib's lower-level calls, tolerant of what browsers
/// tolerate and `DGifSlurp` refuses:
/// - an extension whose first sub-block is empty (`21 FE 00`): the slurp reads one sub-block
///   more, takes the next record's first byte as a length and fails with "Wrong record type";
/// - a file that ends after its last frame, without the trailer or the frame's block
///   terminator: the frames read are kept, with a warning;
/// - unknown extensions, skipped; an unknown record after a frame, where reading stops;
/// - a frame whose LZW minimum code size is 9 to 11, which giflib refuses as it sets up the
///   frame's decompression: that frame's data is decoded by ``GIFWideCodeDecoder``, and giflib
///   goes on reading after it.
///
/// Data that ends inside a frame is truncation: an error, or with
/// ``DecodeOptions/acceptsTruncatedImages`` the rows that arrived (the rest left undrawn) and a
/// partial image.
///
/// Each frame's palette indices (a byte per pixel) are held at the size its descriptor declares,
/// whatever the canvas: a small file can declare frames far larger than its canvas. So each
/// descriptor is checked before its pixels are read: every frame within the pixel limit, all of
/// them together within four times it, the memory the limit allows for the same pixels composed
/// as RGBA.
struct GIFRecordReader {
    /// One frame as stored.
    struct Frame {
        let left: Int
        let top: Int
        let width: Int
        let height: Int
        /// The local colour table as opaque RGBA entries, if the frame has one.
        let palette: [UInt32]?
        /// A palette index per pixel, row by row.
        let indices: [UInt8]
        /// Which rows arrived, for a frame the data ended inside; nil when all did.
        let decodedRows: [Bool]?
        let control: GraphicsControlBlock
    }

    private(set) var frames: [Frame] = []
    /// The global colour table as opaque RGBA entries, if the file has one.
    private(set) var globalPalette: [UInt32]?
    /// The NETSCAPE2.0 loop count (0 = forever), or 1 when the file has none.
    private(set) var loopCount = 1
    private(set) var warnings: [String] = []
    private(set) var isPartial = false
    private let limits: DecodeLimits
    private let acceptTruncated: Bool
    private let inputSize: Int
    /// The pixels the frames read so far declare.
    private var declaredPixels = 0
    /// The bytes giflib reads, where the reader takes over a frame giflib refuses.
    private let source: Source

    /// Reads every record of `data` up to the trailer, or as far as it goes.
    init(_ data: Data, limits: DecodeLimits, acceptTruncated: Bool) throws(WebImageError) {
        self.limits = limits
        self.acceptTruncated = acceptTruncated
        inputSize = data.count
        source = Source(data)
        var status: Int32 = 0
        let context = Unmanaged.passUnretained(source).toOpaque()
        guard let gif = DGifOpen(context, Source.read, &status) else {
            throw WebImageError(.decodeFailed, "GIF: \(Self.message(status))")
        }
        defer { _ = DGifCloseFile(gif, &status) }
        globalPalette = Self.palette(gif.pointee.SColorMap)
        try readRecords(gif)
        guard !frames.isEmpty else { throw WebImageError(.decodeFailed, "GIF: no frame") }
    }

    private mutating func readRecords(_ gif: UnsafeMutablePointer<GifFileType>) throws(WebImageError) {
        var control: GraphicsControlBlock?
        while true {
            var type = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &type) == GIF_OK else { return try stop(gif, "the file ends without its trailer") }
            switch type {
            case IMAGE_DESC_RECORD_TYPE:
                let descriptorStart = source.offset
                guard DGifGetImageDesc(gif) == GIF_OK else {
                    if let codeSize = refusedWideCodeSize(descriptorStart: descriptorStart) {
                        let complete = try readWideCodeFrame(gif, codeSize: codeSize, control: control ?? Self.noControl)
                        control = nil
                        guard complete else { return }
                        continue
                    }
                    return try endInsideFrame(gif, "the data ends inside frame \(frames.count)'s descriptor")
                }
                let complete = try readFrame(gif, control: control ?? Self.noControl)
                control = nil
                guard complete else { return }
            case EXTENSION_RECORD_TYPE:
                var code: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetExtension(gif, &code, &block) == GIF_OK else { return try stop(gif, "an extension is unreadable") }
                var isFirst = true
                var isLoopExtension = false
                // A first sub-block of length zero comes back as nil: that was the terminator,
                // and there is nothing more to read.
                while let current = block {
                    if isFirst, code == GRAPHICS_EXT_FUNC_CODE {
                        var parsed = Self.noControl
                        if DGifExtensionToGCB(Int(current[0]), current + 1, &parsed) == GIF_OK { control = parsed }
                    }
                    if isFirst, code == APPLICATION_EXT_FUNC_CODE {
                        isLoopExtension = Self.loopExtensionNames.contains { Self.bytes(current, equal: $0) }
                    } else if isLoopExtension, current[0] >= 3, current[1] == 1 {
                        loopCount = Int(current[2]) | Int(current[3]) << 8
                    }
                    isFirst = false
                    guard DGifGetExtensionNext(gif, &block) == GIF_OK else { return try stop(gif, "an extension is cut short") }
                }
            case TERMINATE_RECORD_TYPE:
                return
            default:
                return try stop(gif, "an unknown record follows")
            }
        }
    }

    /// Reading cannot go on: after at least one frame, the frames so far are the image.
    private mutating func stop(_ gif: UnsafeMutablePointer<GifFileType>, _ what: String) throws(WebImageError) {
        let detail = "\(what) (giflib: \(Self.message(gif.pointee.Error)))"
        guard !frames.isEmpty else { throw WebImageError(.decodeFailed, "GIF: \(detail)") }
        warnings.append("after frame \(frames.count): \(detail)")
    }

    /// The data ended inside a frame: truncation, an error unless truncated images are accepted.
    private mutating func endInsideFrame(_ gif: UnsafeMutablePointer<GifFileType>, _ what: String) throws(WebImageError) {
        let message = "\(what) (giflib: \(Self.message(gif.pointee.Error)))"
        guard acceptTruncated else { throw WebImageError(.decodeFailed, "GIF: \(message)") }
        isPartial = true
        warnings.append(message)
    }

    /// Reads one frame's pixels; false when reading has to stop after it.
    private mutating func readFrame(_ gif: UnsafeMutablePointer<GifFileType>, control: GraphicsControlBlock) throws(WebImageError) -> Bool {
        let descriptor = gif.pointee.Image
        let width = Int(descriptor.Width)
        let height = Int(descriptor.Height)
        try checkDeclared(width: width, height: height)
        let palette = Self.palette(descriptor.ColorMap)
        var indices = try PixelBuffer.zeroedBytes(width: width, height: height, bytesPerPixel: 1)
        var decodedRows: [Bool]?
        var goesOn = true
        if width == 0 || height == 0 {
            goesOn = Self.skipImageData(gif)
        } else {
            let order = descriptor.Interlace ? Self.interlacedRows(height) : Array(0..<height)
            for (position, row) in order.enumerated() {
                let read = indices.withUnsafeMutableBufferPointer { DGifGetLine(gif, $0.baseAddress! + row * width, Int32(width)) }
                if read == GIF_OK { continue }
                goesOn = false
                // The last row decoded; only the skip to the frame's block terminator failed.
                if position == order.count - 1 {
                    warnings.append("frame \(frames.count) has no block terminator (giflib: \(Self.message(gif.pointee.Error)))")
                    break
                }
                try endInsideFrame(gif, "the data ends inside frame \(frames.count)")
                var rows = [Bool](repeating: false, count: height)
                for arrived in order.prefix(position) { rows[arrived] = true }
                decodedRows = rows
                break
            }
        }
        frames.append(
            Frame(
                left: Int(descriptor.Left), top: Int(descriptor.Top), width: width, height: height, palette: palette, indices: indices,
                decodedRows: decodedRows, control: control))
        return goesOn
    }

    /// The LZW minimum code size (9 to 11) giflib refused as the last byte it read, right after
    /// the frame's descriptor and local colour table that start at `descriptorStart`; nil when
    /// the descriptor failed otherwise.
    private func refusedWideCodeSize(descriptorStart: Int) -> Int? {
        let bytes = source.bytes
        let flagsAt = bytes.startIndex + descriptorStart + 8
        guard flagsAt < bytes.endIndex else { return nil }
        let flags = bytes[flagsAt]
        let table = flags & 0x80 != 0 ? 3 << (Int(flags & 7) + 1) : 0
        let codeSizeOffset = descriptorStart + 9 + table
        guard source.offset == codeSizeOffset + 1, codeSizeOffset < bytes.count else { return nil }
        let codeSize = Int(bytes[bytes.startIndex + codeSizeOffset])
        return (9...11).contains(codeSize) ? codeSize : nil
    }

    /// Reads a frame giflib refused for its code size (its descriptor read) with the reader's own
    /// LZW decoder, then moves giflib's input past the frame's data; false when reading has to
    /// stop after it.
    private mutating func readWideCodeFrame(_ gif: UnsafeMutablePointer<GifFileType>, codeSize: Int, control: GraphicsControlBlock)
        throws(WebImageError) -> Bool
    {
        let descriptor = gif.pointee.Image
        let width = Int(descriptor.Width)
        let height = Int(descriptor.Height)
        try checkDeclared(width: width, height: height)
        let pixelCount = try PixelBuffer.byteCount(width: width, height: height, bytesPerPixel: 1)
        let start = source.offset
        let outcome = source.bytes.withUnsafeBytes { bytes in
            GIFWideCodeDecoder.decode(bytes, from: start, minimumCodeSize: codeSize, pixelCount: pixelCount)
        }
        var indices = outcome.indices
        let order = descriptor.Interlace ? Self.interlacedRows(height) : Array(0..<height)
        if descriptor.Interlace {
            for (position, row) in order.enumerated() {
                indices.replaceSubrange(row * width..<(row + 1) * width, with: outcome.indices[position * width..<(position + 1) * width])
            }
        }
        var decodedRows: [Bool]?
        if outcome.decodedPixels < pixelCount {
            try endInsideFrame(gif, "the data ends inside frame \(frames.count) (\(codeSize)-bit minimum code size)")
            var rows = [Bool](repeating: false, count: height)
            for arrived in order.prefix(width > 0 ? outcome.decodedPixels / width : 0) { rows[arrived] = true }
            decodedRows = rows
        }
        frames.append(
            Frame(
                left: Int(descriptor.Left), top: Int(descriptor.Top), width: width, height: height,
                palette: Self.palette(descriptor.ColorMap), indices: indices, decodedRows: decodedRows, control: control))
        guard let end = outcome.end, decodedRows == nil else { return false }
        source.offset = end
        return true
    }

    /// A frame within the pixel limit, and all frames so far within four times it.
    private mutating func checkDeclared(width: Int, height: Int) throws(WebImageError) {
        try limits.check(width: width, height: height, inputSize: inputSize)
        declaredPixels += width * height
        let (budget, overflow) = limits.maximumPixelCount.multipliedReportingOverflow(by: 4)
        guard overflow || declaredPixels <= budget else {
            throw WebImageError(
                .tooLarge,
                "the frames of this GIF declare \(declaredPixels) pixels, over four times the \(limits.maximumPixelCount)-pixel limit")
        }
    }

    /// Skips the compressed data of an empty frame.
    private static func skipImageData(_ gif: UnsafeMutablePointer<GifFileType>) -> Bool {
        var codeSize: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        guard DGifGetCode(gif, &codeSize, &block) == GIF_OK else { return false }
        while block != nil {
            guard DGifGetCodeNext(gif, &block) == GIF_OK else { return false }
        }
        return true
    }

    /// The order an interlaced frame's rows are stored in: every 8th from 0, every 8th from 4,
    /// every 4th from 2, every 2nd from 1.
    private static func interlacedRows(_ height: Int) -> [Int] {
        [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { start, step in Array(stride(from: start, to: height, by: step)) }
    }

    private static func palette(_ map: UnsafeMutablePointer<ColorMapObject>?) -> [UInt32]? {
        guard let map, let colors = map.pointee.Colors else { return nil }
        return (0..<min(Int(map.pointee.ColorCount), 256)).map { index in
            let color = colors[index]
            return UInt32(color.Red) | UInt32(color.Green) << 8 | UInt32(color.Blue) << 16 | 0xFF00_0000
        }
    }

    /// The application extensions that carry a loop count in their first data sub-block.
    private static let loopExtensionNames = ["NETSCAPE2.0", "ANIMEXTS1.0"]

    /// Whether a sub-block (its length, then its bytes) holds exactly `text`.
    private static func bytes(_ block: UnsafeMutablePointer<GifByteType>, equal text: String) -> Bool {
        let expected = Array(text.utf8)
        return Int(block[0]) == expected.count && expected.indices.allSatisfy { block[$0 + 1] == expected[$0] }
    }

    private static let noControl = GraphicsControlBlock(
        DisposalMode: DISPOSAL_UNSPECIFIED, UserInputFlag: false, DelayTime: 0, TransparentColor: NO_TRANSPARENT_COLOR)

    static func message(_ code: Int32) -> String {
        GifErrorString(code).map { String(cString: $0) } ?? "error \(code)"
    }

    /// The bytes giflib reads from, through its read callback.
    private final class Source {
        let bytes: Data
        var offset = 0

        init(_ bytes: Data) {
            self.bytes = bytes
        }

        static let read: InputFunc = { file, buffer, length in
            guard let file, let buffer, let user = file.pointee.UserData else { return 0 }
            let source = Unmanaged<Source>.fromOpaque(user).takeUnretainedValue()
            let count = min(Int(length), source.bytes.count - source.offset)
            guard count > 0 else { return 0 }
            let start = source.bytes.startIndex + source.offset
            source.bytes.copyBytes(to: UnsafeMutableRawBufferPointer(start: buffer, count: count), from: start..<(start + count))
            source.offset += count
            return Int32(count)
        }
    }
}
