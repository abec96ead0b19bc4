package import Foundation

/// BMP and ICO, parsed in Swift (no system library): small, well specified, and every size and
/// offset is checked against the bytes that are there before anything is read or allocated.
///
/// BMP: the OS/2 core header and the Windows INFO, V2 to V5 headers; 1, 4 and 8 bits through the
/// palette, 16 and 32 bits through bit fields (5-5-5 by default for 16), 24 bits; RLE8 and RLE4
/// (pixels the runs skip are palette entry 0, as Pillow reads them); bottom-up and top-down rows;
/// alpha from an alpha mask (32-bit `BI_RGB` files keep their fourth byte unused, as Pillow and the
/// format's original readers take it). ICO and CUR: the entry nearest the thumbnail asked for
/// (else the largest), a PNG inside decoded by the PNG coder, a BMP inside with its AND mask as
/// transparency (32-bit entries use their alpha). Decoding only: the formats are read, not written.
package struct BMPCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .bmp || format == .ico }
    public func canEncode(to format: ImageFormat) -> Bool { false }

    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        throw WebImageError(.unsupportedFormat, "BMPCoder only decodes")
    }

    public func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        try data.withTypedBytes { bytes throws(WebImageError) -> Image in
            let raw = UnsafeRawBufferPointer(bytes)
            if ImageFormat(sniffing: raw) == .ico { return try ICOFile(raw).decode(data, options: options) }
            guard raw.count >= 14, raw[0] == 0x42, raw[1] == 0x4D else { throw WebImageError(.decodeFailed, "BMP: no file header") }
            let pixelOffset = Int(try LittleEndian(raw).uint32(10))
            let dib = try DIB(UnsafeRawBufferPointer(rebasing: raw[14...]), pixelOffset: pixelOffset - 14, hasMask: false)
            try options.limits.checkDeclared(width: dib.width, height: dib.height)
            try options.limits.check(width: dib.width, height: dib.height, inputSize: raw.count)
            let pixels = try dib.pixels()
            return Image(pixels: pixels, scale: options.scale, sourceFormat: .bmp, hasAlpha: dib.hasAlpha)
        }
    }
}

/// Bounds-checked little-endian reads.
struct LittleEndian {
    let bytes: UnsafeRawBufferPointer
    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    func uint16(_ offset: Int) throws(WebImageError) -> UInt16 {
        guard offset >= 0, offset + 2 <= bytes.count else { throw WebImageError(.decodeFailed, "BMP: header truncated") }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    func uint32(_ offset: Int) throws(WebImageError) -> UInt32 {
        UInt32(try uint16(offset)) | UInt32(try uint16(offset + 2)) << 16
    }

    func int32(_ offset: Int) throws(WebImageError) -> Int32 { Int32(bitPattern: try uint32(offset)) }
}

/// A device-independent bitmap: a BMP after its 14-byte file header, or an ICO entry (whose
/// declared height counts the AND mask too).
struct DIB {
    let bytes: UnsafeRawBufferPointer
    let width: Int
    let height: Int
    let topDown: Bool
    let bitCount: Int
    let compression: UInt32
    let palette: [SIMD4<UInt8>]
    let masks: [UInt32]
    let pixelOffset: Int
    let hasMask: Bool

    var hasAlpha: Bool { hasMask || (masks.count == 4 && masks[3] != 0) }

    init(_ bytes: UnsafeRawBufferPointer, pixelOffset: Int?, hasMask: Bool) throws(WebImageError) {
        let read = LittleEndian(bytes)
        let headerSize = Int(try read.uint32(0))
        self.bytes = bytes
        self.hasMask = hasMask
        var width: Int
        var height: Int
        var compression: UInt32 = 0
        var colorsUsed = 0
        var masks: [UInt32] = []
        let paletteEntrySize: Int
        if headerSize == 12 {
            width = Int(try read.uint16(4))
            height = Int(try read.uint16(6))
            bitCount = Int(try read.uint16(10))
            paletteEntrySize = 3
        } else if [40, 52, 56, 64, 108, 124].contains(headerSize) {
            width = Int(try read.int32(4))
            height = Int(try read.int32(8))
            bitCount = Int(try read.uint16(14))
            compression = try read.uint32(16)
            colorsUsed = Int(try read.uint32(32))
            paletteEntrySize = 4
            // OS/2 2.x headers (64 bytes) number their compressions differently; only RGB is common.
            if headerSize == 64, compression != 0 { throw WebImageError(.decodeFailed, "BMP: OS/2 compression \(compression)") }
            if compression == 3 || compression == 6 {
                let count = compression == 6 || headerSize >= 56 ? 4 : 3
                for index in 0..<count { masks.append(try read.uint32(40 + index * 4)) }
            }
        } else {
            throw WebImageError(.decodeFailed, "BMP: unknown header of \(headerSize) bytes")
        }
        if hasMask { height /= 2 }
        topDown = height < 0
        height = abs(height)
        guard width > 0, height > 0, width <= 1 << 20, height <= 1 << 20 else {
            throw WebImageError(.decodeFailed, "BMP: size \(width)x\(height)")
        }
        guard [1, 4, 8, 16, 24, 32].contains(bitCount) else { throw WebImageError(.decodeFailed, "BMP: \(bitCount) bits per pixel") }
        switch (compression, bitCount) {
        case (0, _), (1, 8), (2, 4), (3, 16), (3, 32), (6, 16), (6, 32): break
        default: throw WebImageError(.decodeFailed, "BMP: compression \(compression) with \(bitCount) bits")
        }
        self.width = width
        self.height = height
        self.compression = compression
        // Bit fields in an INFO header follow it; the palette follows those.
        let paletteStart = headerSize + (headerSize == 40 ? masks.count * 4 : 0)
        var palette: [SIMD4<UInt8>] = []
        if bitCount <= 8 {
            let count = colorsUsed > 0 && colorsUsed <= 1 << bitCount ? colorsUsed : 1 << bitCount
            for index in 0..<count {
                let offset = paletteStart + index * paletteEntrySize
                guard offset + 3 <= bytes.count else { break }
                palette.append(SIMD4(bytes[offset + 2], bytes[offset + 1], bytes[offset], 255))
            }
            guard !palette.isEmpty else { throw WebImageError(.decodeFailed, "BMP: no palette") }
        }
        self.palette = palette
        self.masks = bitCount == 16 && masks.isEmpty ? [0x7C00, 0x03E0, 0x001F] : masks
        self.pixelOffset = pixelOffset ?? paletteStart + palette.count * paletteEntrySize
        guard self.pixelOffset >= 0, self.pixelOffset <= bytes.count else {
            throw WebImageError(.decodeFailed, "BMP: pixel data outside the file")
        }
    }

    var rowBytes: Int { (width * bitCount + 31) / 32 * 4 }

    /// The straight RGBA pixels, top row first.
    func pixels() throws(WebImageError) -> PixelBuffer {
        var output = try PixelBuffer.zeroedBytes(width: width, height: height)
        if compression == 1 || compression == 2 {
            try decodeRLE(into: &output)
        } else {
            guard pixelOffset + rowBytes * height <= bytes.count else { throw WebImageError(.decodeFailed, "BMP: pixel data truncated") }
            for row in 0..<height {
                let source = pixelOffset + row * rowBytes
                let target = (topDown ? row : height - 1 - row) * width * 4
                for x in 0..<width { store(pixel(at: source, x), &output, target + x * 4) }
            }
        }
        if hasMask { applyANDMask(&output) }
        return PixelBuffer(width: width, height: height, straightRGBA: output)
    }

    private func store(_ pixel: SIMD4<UInt8>, _ output: inout [UInt8], _ offset: Int) {
        output[offset] = pixel[0]
        output[offset + 1] = pixel[1]
        output[offset + 2] = pixel[2]
        output[offset + 3] = pixel[3]
    }

    private func colour(_ index: Int) -> SIMD4<UInt8> { index < palette.count ? palette[index] : palette[0] }

    private func pixel(at row: Int, _ x: Int) -> SIMD4<UInt8> {
        switch bitCount {
        case 1, 4, 8:
            let bit = x * bitCount
            let byte = bytes[row + bit / 8]
            let shift = 8 - bitCount - bit % 8
            return colour(Int(byte >> UInt8(shift)) & ((1 << bitCount) - 1))
        case 24:
            let offset = row + x * 3
            return SIMD4(bytes[offset + 2], bytes[offset + 1], bytes[offset], 255)
        case 16:
            let offset = row + x * 2
            return fields(UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8)
        default:
            let offset = row + x * 4
            let value =
                UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
            if masks.isEmpty { return SIMD4(bytes[offset + 2], bytes[offset + 1], bytes[offset], hasMask ? bytes[offset + 3] : 255) }
            return fields(value)
        }
    }

    /// A pixel through its bit masks, each field scaled to 8 bits (alpha 255 without a mask).
    private func fields(_ value: UInt32) -> SIMD4<UInt8> {
        func channel(_ index: Int) -> UInt8? {
            guard index < masks.count, masks[index] != 0 else { return nil }
            let mask = masks[index]
            let shift = mask.trailingZeroBitCount
            let maximum = mask >> shift
            return UInt8((UInt64((value & mask) >> shift) * 255 + UInt64(maximum) / 2) / UInt64(maximum))
        }
        return SIMD4(channel(0) ?? 0, channel(1) ?? 0, channel(2) ?? 0, channel(3) ?? 255)
    }

    /// RLE8 and RLE4: runs, end of line, end of bitmap, deltas and absolute runs; what the runs
    /// never reach stays palette entry 0.
    private func decodeRLE(into output: inout [UInt8]) throws(WebImageError) {
        let background = colour(0)
        for offset in stride(from: 0, to: output.count, by: 4) { store(background, &output, offset) }
        var position = pixelOffset
        var x = 0
        var y = 0
        func put(_ index: Int) {
            guard x < width, y < height else { return }
            store(colour(index), &output, ((topDown ? y : height - 1 - y) * width + x) * 4)
            x += 1
        }
        while y < height {
            guard position + 2 <= bytes.count else { throw WebImageError(.decodeFailed, "BMP: RLE data truncated") }
            let count = Int(bytes[position])
            let value = bytes[position + 1]
            position += 2
            if count > 0 {
                for step in 0..<count { put(bitCount == 8 ? Int(value) : Int(step % 2 == 0 ? value >> 4 : value & 0x0F)) }
                continue
            }
            switch value {
            case 0:
                x = 0
                y += 1
            case 1:
                return
            case 2:
                guard position + 2 <= bytes.count else { throw WebImageError(.decodeFailed, "BMP: RLE delta truncated") }
                x += Int(bytes[position])
                y += Int(bytes[position + 1])
                position += 2
            default:
                let length = Int(value)
                let stored = bitCount == 8 ? length : (length + 1) / 2
                guard position + stored <= bytes.count else { throw WebImageError(.decodeFailed, "BMP: RLE run truncated") }
                for index in 0..<length {
                    let byte = bytes[position + (bitCount == 8 ? index : index / 2)]
                    put(bitCount == 8 ? Int(byte) : Int(index % 2 == 0 ? byte >> 4 : byte & 0x0F))
                }
                // Absolute runs are padded to a 16-bit boundary.
                position += stored + stored % 2
            }
        }
    }

    /// An ICO entry's 1-bit AND mask after its pixels: 1 is transparent. 32-bit entries carry
    /// alpha already; their mask is ignored, as Windows and Pillow do.
    private func applyANDMask(_ output: inout [UInt8]) {
        let maskRow = (width + 31) / 32 * 4
        let start = pixelOffset + rowBytes * height
        for row in 0..<height {
            let target = (topDown ? row : height - 1 - row) * width * 4
            for x in 0..<width {
                let offset = start + row * maskRow + x / 8
                let transparent = offset < bytes.count && bytes[offset] & (0x80 >> UInt8(x % 8)) != 0
                if bitCount == 32 { continue }
                output[target + x * 4 + 3] = transparent ? 0 : 255
                if transparent { for channel in 0..<3 { output[target + x * 4 + channel] = 0 } }
            }
        }
    }
}

/// An ICO or CUR file's directory.
struct ICOFile {
    struct Entry {
        let width: Int
        let height: Int
        let bitCount: Int
        let data: UnsafeRawBufferPointer
    }

    let entries: [Entry]

    init(_ bytes: UnsafeRawBufferPointer) throws(WebImageError) {
        let read = LittleEndian(bytes)
        let count = Int(try read.uint16(4))
        guard count > 0 else { throw WebImageError(.decodeFailed, "ICO: no images") }
        var entries: [Entry] = []
        for index in 0..<count {
            let base = 6 + index * 16
            guard base + 16 <= bytes.count else { throw WebImageError(.decodeFailed, "ICO: directory truncated") }
            let size = Int(try read.uint32(base + 8))
            let offset = Int(try read.uint32(base + 12))
            guard size > 0, offset >= 0, offset <= bytes.count, size <= bytes.count - offset else { continue }
            entries.append(
                Entry(
                    width: bytes[base] == 0 ? 256 : Int(bytes[base]), height: bytes[base + 1] == 0 ? 256 : Int(bytes[base + 1]),
                    bitCount: Int(try read.uint16(base + 6)), data: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)])))
        }
        guard !entries.isEmpty else { throw WebImageError(.decodeFailed, "ICO: every entry lies outside the file") }
        self.entries = entries
    }

    /// The entry nearest the thumbnail (the smallest at least as large, else the largest), or the
    /// largest; among equal sizes the most bits per pixel.
    func entry(for thumbnail: ThumbnailSize?) -> Entry {
        let ordered = entries.sorted { ($0.width * $0.height, $0.bitCount) < ($1.width * $1.height, $1.bitCount) }
        guard let thumbnail else { return ordered.last! }
        return ordered.first { $0.width >= thumbnail.width && $0.height >= thumbnail.height } ?? ordered.last!
    }

    func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        let chosen = entry(for: options.thumbnail)
        var image: Image
        if chosen.data.count >= 8, chosen.data.prefix(8).elementsEqual(PNGChunk.signature) {
            image = try PNGCoder().decode(Data(chosen.data), options: options)
        } else {
            let dib = try DIB(chosen.data, pixelOffset: nil, hasMask: true)
            try options.limits.checkDeclared(width: dib.width, height: dib.height)
            try options.limits.check(width: dib.width, height: dib.height, inputSize: data.count)
            image = Image(pixels: try dib.pixels(), scale: options.scale)
        }
        image.sourceFormat = .ico
        return image
    }
}
