import CZlib
import Foundation

/// A PNG written as the specification lays one out, with none of our encoder's code: any colour
/// type and bit depth, Adam7 or not, a palette and a tRNS chunk as given, and every filter type
/// used (rows cycle through them, with runs of Paeth long enough for the decoder's sixteen-row
/// wavefront). The files the direct decoding path is compared with libpng on.
struct SpecPNG {
    var width: Int
    var height: Int
    /// PNG's colour type: 0 grey, 2 RGB, 3 palette, 4 grey and alpha, 6 RGBA.
    var colorType: UInt8
    var depth: Int
    var interlaced = false
    /// `PLTE`'s entries, three bytes each.
    var palette: [UInt8] = []
    /// `tRNS`'s data as the chunk holds it (alphas of palette entries, or a two-byte-per-sample key).
    var transparency: [UInt8]?
    /// Every pixel's samples in order, each below 2^depth.
    var samples: [UInt16]
    /// Ancillary chunks written before the image data, by type.
    var chunks: [(type: String, data: Data)] = []

    static func channels(_ colorType: UInt8) -> Int { [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][colorType] ?? 0 }

    /// Samples that vary smoothly and with noise, so that every filter meets different data.
    static func samples(width: Int, height: Int, colorType: UInt8, depth: Int, seed: UInt32) -> [UInt16] {
        var state = seed
        let largest = (1 << depth) - 1
        let channels = Self.channels(colorType)
        return (0..<(width * height * channels)).map { index in
            state = state &* 1_103_515_245 &+ 12345
            let pixel = index / channels
            let (x, y) = (pixel % width, pixel / width)
            let smooth = (x * 37 + y * 23 + index % channels * 71) * largest / max(1, width * 37 + height * 23)
            let noise = Int(state >> 16) % max(1, largest / 8 + 1)
            return UInt16(min(largest, smooth + noise))
        }
    }

    func encoded() -> Data {
        var header = Data()
        for value in [UInt32(width), UInt32(height)] { header.append(contentsOf: Self.bigEndian(value)) }
        header.append(contentsOf: [UInt8(depth), colorType, 0, 0, interlaced ? 1 : 0])
        var file = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        file.append(Self.chunk("IHDR", header))
        if !palette.isEmpty { file.append(Self.chunk("PLTE", Data(palette))) }
        if let transparency { file.append(Self.chunk("tRNS", Data(transparency))) }
        for (type, data) in chunks { file.append(Self.chunk(type, data)) }
        file.append(Self.chunk("IDAT", Self.deflated(filteredImageData())))
        file.append(Self.chunk("IEND", Data()))
        return file
    }

    /// Each pass's rows (the image's alone without Adam7), each behind its filter type byte
    /// (specification, sections 7.2, 8.2 and 9).
    func filteredImageData() -> [UInt8] {
        let passes: [(Int, Int, Int, Int)] =
            interlaced
            ? [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)] : [(0, 0, 1, 1)]
        var data: [UInt8] = []
        for (index, (x0, y0, dx, dy)) in passes.enumerated() {
            let columns = Array(stride(from: x0, to: width, by: dx))
            let rows = Array(stride(from: y0, to: height, by: dy))
            guard !columns.isEmpty, !rows.isEmpty else { continue }
            let packed = rows.map { y in packedRow(columns.map { y * width + $0 }) }
            data += Self.filtered(packed, bpp: max(1, Self.channels(colorType) * depth / 8), first: index)
        }
        return data
    }

    /// The samples of `pixels`, packed most significant first (below 8 bits) or big-endian.
    private func packedRow(_ pixels: [Int]) -> [UInt8] {
        let channels = Self.channels(colorType)
        let values = pixels.flatMap { pixel in (0..<channels).map { Int(samples[pixel * channels + $0]) } }
        if depth == 16 { return values.flatMap { [UInt8($0 >> 8), UInt8($0 & 255)] } }
        if depth == 8 { return values.map { UInt8($0) } }
        var bytes = [UInt8](repeating: 0, count: (values.count * depth + 7) / 8)
        for (index, value) in values.enumerated() {
            let bit = index * depth
            bytes[bit / 8] |= UInt8(value << (8 - depth - bit % 8))
        }
        return bytes
    }

    /// Rows filtered: row `y` of a pass takes type (first + y) % 5, except that rows 5 to 20 are
    /// all Paeth (a run the decoder unfilters sixteen rows at once).
    static func filtered(_ rows: [[UInt8]], bpp: Int, first: Int) -> [UInt8] {
        var out: [UInt8] = []
        for (y, row) in rows.enumerated() {
            let type = (5...20).contains(y) ? 4 : (first + y) % 5
            out.append(UInt8(type))
            for i in row.indices {
                let left = i >= bpp ? Int(row[i - bpp]) : 0
                let above = y > 0 ? Int(rows[y - 1][i]) : 0
                let upperLeft = y > 0 && i >= bpp ? Int(rows[y - 1][i - bpp]) : 0
                out.append(UInt8(truncatingIfNeeded: Int(row[i]) - prediction(type, left: left, above: above, upperLeft: upperLeft)))
            }
        }
        return out
    }

    /// What filter `type` predicts a byte from its unfiltered neighbours (specification, section
    /// 9: None, Sub, Up, Average, Paeth, ties going to left, then above).
    static func prediction(_ type: Int, left: Int, above: Int, upperLeft: Int) -> Int {
        switch type {
        case 1: return left
        case 2: return above
        case 3: return (left + above) / 2
        case 4:
            let estimate = left + above - upperLeft
            let (toLeft, toAbove, toUpperLeft) = (abs(estimate - left), abs(estimate - above), abs(estimate - upperLeft))
            return toLeft <= toAbove && toLeft <= toUpperLeft ? left : toAbove <= toUpperLeft ? above : upperLeft
        default: return 0
        }
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }

    private static func chunk(_ type: String, _ data: Data) -> Data {
        let body = Data(type.utf8) + data
        let crc = body.withUnsafeBytes { UInt32(crc32(0, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), uInt($0.count))) }
        return Data(bigEndian(UInt32(data.count))) + body + Data(bigEndian(crc))
    }

    static func deflated(_ bytes: [UInt8]) -> Data {
        var size = compressBound(uLong(bytes.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        let status = compress2(&out, &size, bytes, uLong(bytes.count), 6)
        precondition(status == Z_OK, "zlib compress2 failed")
        return Data(out.prefix(Int(size)))
    }
}
