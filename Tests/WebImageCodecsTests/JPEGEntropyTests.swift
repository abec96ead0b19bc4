import CWebImageCodecs
import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// The planes decode's own Huffman decoder (`JPEGEntropy.c`) against libjpeg-turbo's, which
/// `CWI_JPEG_LIBJPEG_ENTROPY` puts back: the reference is the library itself, decoding the same
/// file into the same planes.
@Suite("JPEG baseline Huffman decoding")
struct JPEGEntropyTests {
    /// The whole image's planes at `eighths`/8, and the decode's status; nil for a file without
    /// a frame header.
    private static func planes(_ data: Data, eighths: UInt32, flags: UInt32) throws -> (status: Int32, bytes: [[UInt8]])? {
        guard let frame = Self.frame(data) else { return nil }
        // 4:2:0 is the largest iMCU: planes sized for it hold every subsampling's.
        let (columns, rows) = ((frame.width + 15) / 16, (frame.height + 15) / 16)
        let stride = columns * 2 * Int(eighths)
        // Each plane's iMCUs as the file has them: the decode refuses a window past them.
        let window = cwi_jpeg_window(
            first_column: 0, last_column: UInt32((frame.width + 8 * frame.x - 1) / (8 * frame.x) - 1), first_row: 0,
            last_row: UInt32((frame.height + 8 * frame.y - 1) / (8 * frame.y) - 1))
        return Self.decode(
            data, eighths: eighths, window: window, strides: [stride, stride, stride],
            lengths: Array(repeating: stride * rows * 2 * Int(eighths), count: 3), flags: flags)
    }

    /// `cwi_jpeg_decode_planes` into zeroed planes of `lengths` bytes: its status and the planes.
    private static func decode(
        _ data: Data, eighths: UInt32, window: cwi_jpeg_window, strides: [Int], lengths: [Int], flags: UInt32
    ) -> (status: Int32, bytes: [[UInt8]]) {
        var (window, strides, lengths) = (window, strides, lengths)
        var (luma, blue, red) = (
            [UInt8](repeating: 0, count: lengths[0]), [UInt8](repeating: 0, count: lengths[1]), [UInt8](repeating: 0, count: lengths[2])
        )
        var message = [CChar](repeating: 0, count: 200)
        let status = luma.withUnsafeMutableBufferPointer { luma in
            blue.withUnsafeMutableBufferPointer { blue in
                red.withUnsafeMutableBufferPointer { red in
                    var pointers = [luma.baseAddress, blue.baseAddress, red.baseAddress]
                    return data.withUnsafeBytes { source in
                        cwi_jpeg_decode_planes(
                            source.baseAddress?.assumingMemoryBound(to: UInt8.self), source.count, eighths, &window, &pointers, &strides,
                            &lengths, flags, &message)
                    }
                }
            }
        }
        return (status, [luma, blue, red])
    }

    /// The size and the luma's sampling factors from the frame header (SOF0, SOF1 or SOF2), or nil.
    private static func frame(_ data: Data) -> (width: Int, height: Int, x: Int, y: Int)? {
        let bytes = [UInt8](data)
        var index = 2
        while index + 4 < bytes.count, bytes[index] == 0xFF {
            let marker = bytes[index + 1]
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if marker == 0xC0 || marker == 0xC1 || marker == 0xC2, index + 11 < bytes.count {
                let (height, width) = (
                    Int(bytes[index + 5]) << 8 | Int(bytes[index + 6]), Int(bytes[index + 7]) << 8 | Int(bytes[index + 8])
                )
                let (x, y) = (Int(bytes[index + 11] >> 4), Int(bytes[index + 11] & 15))
                guard width > 0, height > 0, (1...2).contains(x), (1...2).contains(y) else { return nil }
                return (width, height, x, y)
            }
            index += 2 + length
        }
        return nil
    }

    private static func photo(width: Int, height: Int, seed: UInt64) -> PixelBuffer {
        var random = SplitMix64(seed: seed)
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for index in 0..<(width * height) {
            let (x, y) = (index % width, index / width)
            let noise = Int(random.next() % 40)
            let edge = (x / 13 + y / 11) % 4 == 0 ? 120 : 0
            bytes[index * 4] = UInt8(min(255, x * 200 / width + noise + edge))
            bytes[index * 4 + 1] = UInt8(min(255, y * 180 / height + noise / 2))
            bytes[index * 4 + 2] = UInt8(min(255, 60 + edge / 2 + noise))
        }
        return PixelBuffer(width: width, height: height, straightRGBA: bytes)
    }

    /// Sources of every kind the decoder meets: the corpus's baseline files of each subsampling
    /// and size, files written with restart intervals (`scripts/fixtures/make_jpeg_restart.py`, libjpeg-turbo's
    /// `cjpeg -restart`), and
    /// photographs from coarse to fine quantisation (q30 to q100, which have long AC codes and
    /// values too large for the one-lookup table), odd sizes among them.
    private static func sources() throws -> [(String, Data)] {
        var sources: [(String, Data)] = []
        for size in ["16x12", "17x13", "33x7"] {
            for chroma in ["420", "422", "444"] {
                for quality in ["q50", "q90", "q100"] {
                    let name = "corpus/jpeg-\(size)-\(quality)-\(chroma).jpg"
                    if let data = try? Fixture.data(name) { sources.append((name, data)) }
                }
            }
        }
        for name in [
            "jpeg-restart/jpeg-restart-1-420.jpg", "jpeg-restart/jpeg-restart-7-422.jpg", "jpeg-restart/jpeg-restart-rows-444.jpg",
        ] {
            sources.append((name, try Fixture.data(name)))
        }
        for (index, (width, height, quality, chroma)) in [
            (256, 192, 0.3, EncodeOptions.ChromaSubsampling.both), (201, 157, 0.75, .horizontal), (160, 120, 0.92, .none),
            (97, 203, 1.0, .both),
        ].enumerated() {
            var options = EncodeOptions(quality: quality)
            options.chromaSubsampling = chroma
            let data = try JPEGCoder().encode(
                Image(pixels: Self.photo(width: width, height: height, seed: UInt64(index))), as: .jpeg, options: options)
            sources.append(("photo \(width)x\(height) q\(Int(quality * 100)) \(chroma)", data))
        }
        return sources
    }

    @Test("the same planes as libjpeg-turbo's decoder, byte for byte, at every DCT scale")
    func matchesLibjpeg() throws {
        for (name, data) in try Self.sources() {
            for eighths: UInt32 in [1, 2, 4, 8] {
                let ours = try #require(try Self.planes(data, eighths: eighths, flags: 0))
                let theirs = try #require(try Self.planes(data, eighths: eighths, flags: CWI_JPEG_LIBJPEG_ENTROPY))
                #expect(theirs.status == 0, "\(name) at \(eighths)/8")
                #expect(ours.status == 0, "\(name) at \(eighths)/8")
                #expect(ours.bytes == theirs.bytes, "\(name) at \(eighths)/8")
            }
        }
    }

    @Test("the planes decode refuses a window outside the image and planes smaller than the window's blocks")
    func refusesBadArguments() throws {
        let data = try Fixture.data("corpus/jpeg-33x7-q90-420.jpg")
        // 33x7 in 4:2:0 is 3 x 1 iMCUs of 16x16.
        // The planes of the whole 3 x 1 window, and each way to get them wrong.
        func status(_ window: cwi_jpeg_window, strides: [Int] = [48, 24, 24], lengths: [Int] = [48 * 16, 24 * 8, 24 * 8]) -> Int32 {
            Self.decode(data, eighths: 8, window: window, strides: strides, lengths: lengths, flags: 0).status
        }
        let whole = cwi_jpeg_window(first_column: 0, last_column: 2, first_row: 0, last_row: 0)
        #expect(status(whole) == 0)
        #expect(status(cwi_jpeg_window(first_column: 0, last_column: 3, first_row: 0, last_row: 0)) == -1)
        #expect(status(cwi_jpeg_window(first_column: 0, last_column: 2, first_row: 0, last_row: 1)) == -1)
        #expect(status(cwi_jpeg_window(first_column: 2, last_column: 1, first_row: 0, last_row: 0)) == -1)
        #expect(status(whole, lengths: [48 * 16, 24 * 8 - 1, 24 * 8]) == -1)
        #expect(status(whole, strides: [47, 24, 24]) == -1)
    }

    /// libjpeg-turbo itself is lenient in places (its fast path takes a code no table has as
    /// symbol 0 without a warning) and strict in others (it warns of a file cut short as soon as
    /// it reads ahead past the end, needed or not): ours refuses every copy it finds damaged,
    /// and what it decodes without refusing is libjpeg-turbo's picture.
    @Test("a damaged copy is refused, or decodes to libjpeg-turbo's planes")
    func damagedCopies() throws {
        var generator = SplitMix64(seed: 41)
        var (clean, refused) = (0, 0)
        for (name, data) in try Self.sources() where data.count > 400 {
            var copies = stride(from: data.count / 2, to: data.count, by: max(1, data.count / 12)).map { data.prefix($0) }
            for _ in 0..<12 {
                var garbled = data
                // Past the headers, into the entropy-coded data.
                for _ in 0..<3 {
                    garbled[Int.random(in: (data.count / 3)..<data.count, using: &generator)] ^= UInt8.random(
                        in: 1...255, using: &generator)
                }
                copies.append(garbled)
            }
            for copy in copies {
                guard let theirs = try Self.planes(copy, eighths: 8, flags: CWI_JPEG_LIBJPEG_ENTROPY),
                    let ours = try Self.planes(copy, eighths: 8, flags: 0)
                else { continue }
                if ours.status == 0 {
                    clean += 1
                    #expect(ours.bytes == theirs.bytes, "\(name): a copy ours decodes (libjpeg-turbo's status \(theirs.status))")
                } else {
                    refused += 1
                }
                // A copy missing a quarter of its data or more is refused (one missing only its
                // last bytes may hold every bit the decode needs, its EOI marker aside).
                if copy.count <= data.count * 3 / 4 { #expect(ours.status != 0, "\(name) cut to \(copy.count) bytes") }
            }
        }
        // Both kinds were met.
        #expect(clean > 0 && refused > 0, "\(clean) clean, \(refused) refused")
    }
}
