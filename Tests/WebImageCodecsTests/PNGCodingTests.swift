import Foundation
import Testing
import WebImageCodecs
import CWebImageCodecs
import CZlib

@testable import WebImageCodecs
import WebImageTestSupport

/// The PNG decoder's direct path (libdeflate, no libpng transforms) against libpng's own rows,
/// and the encoder (adaptive filters, libdeflate, Adam7, palettes) against libpng's reading of
/// what it writes. libpng is the reference throughout: every file the direct path takes must
/// come out byte for byte as libpng decodes it, and every file it declines is libpng's anyway.
@Suite("PNG decoding and encoding")
struct PNGCodingTests {
    /// Every PNG among the fixtures (colour types and bit depths, quirks, the corpus, APNGs'
    /// default images), plus photo-like ones this encoder wrote.
    static let fixtures: [String] = {
        let root = Fixture.url("png-suite").deletingLastPathComponent()
        let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        var names: [String] = []
        while let url = walker?.nextObject() as? URL {
            guard url.pathExtension == "png" else { continue }
            names.append(String(url.path.dropFirst(root.path.count)).trimmingCharacters(in: CharacterSet(charactersIn: "/")))
        }
        return names.sorted()
    }()

    /// A photo-like image: gradients, noise and hard edges, so that every filter type is chosen
    /// somewhere; `alpha` adds a varying alpha channel.
    static func photo(width: Int, height: Int, alpha: Bool) -> PixelBuffer {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        var seed: UInt32 = 12345
        for y in 0..<height {
            for x in 0..<width {
                seed = seed &* 1_103_515_245 &+ 12345
                let noise = Int(seed >> 27)
                let index = (y * width + x) * 4
                let block = (x / 17 + y / 11) % 3 == 0
                bytes[index] = UInt8(truncatingIfNeeded: x * 255 / max(1, width - 1) + noise)
                bytes[index + 1] = block ? 200 : UInt8(truncatingIfNeeded: y * 255 / max(1, height - 1))
                bytes[index + 2] = UInt8(truncatingIfNeeded: (x + y) * 3 + noise)
                bytes[index + 3] = alpha ? UInt8(truncatingIfNeeded: (x * 7 + y * 5) % 256) : 255
            }
        }
        return PixelBuffer(width: width, height: height, straightRGBA: bytes)
    }

    /// Decodes with the direct path allowed and with libpng alone; both must agree entirely.
    static func expectSameDecode(_ data: Data, options: DecodeOptions, _ label: String) {
        data.withUnsafeBytes { bytes in
            let direct = Result { () throws(WebImageError) in try PNGCoder().decodeStill(bytes, options: options, direct: true) }
            let libpng = Result { () throws(WebImageError) in try PNGCoder().decodeStill(bytes, options: options, direct: false) }
            switch (direct, libpng) {
            case (.success(let fast), .success(let reference)):
                #expect(fast.pixels == reference.pixels, "\(label): pixels")
                #expect(fast.hasAlpha == reference.hasAlpha, "\(label): alpha")
                #expect(fast.isPartial == reference.isPartial, "\(label): partial")
                #expect(fast.warnings == reference.warnings, "\(label): warnings")
            case (.failure(let fast), .failure(let reference)):
                #expect("\(fast)" == "\(reference)", "\(label): error")
            default:
                Issue.record("\(label): one path decoded and the other failed: \(direct) / \(libpng)")
            }
        }
    }

    static let decodeVariants: [(String, DecodeOptions)] = [
        ("full", DecodeOptions()),
        ("reduced", DecodeOptions(thumbnail: ThumbnailSize(width: 3, height: 3))),
        ("truncated accepted", DecodeOptions(acceptsTruncatedImages: true)),
    ]

    @Test("the direct path decodes every fixture exactly as libpng does", arguments: fixtures)
    func directMatchesLibpng(name: String) throws {
        let data = try Fixture.data(name)
        for (variant, options) in Self.decodeVariants { Self.expectSameDecode(data, options: options, "\(name) \(variant)") }
    }

    /// Whether the direct path decoded `data` at full size (the outcome's `direct`) to samples of
    /// `sampleBits`, so that the comparisons above are known to compare two paths.
    static func decodesDirectly(_ data: Data, sampleBits: Int32 = 8) -> Bool {
        data.withUnsafeBytes { bytes in
            let source = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
            var header = cwi_header_info()
            guard cwi_png_read_header(source, bytes.count, &header) == 0 else { return false }
            var pixels = [UInt8](repeating: 0, count: Int(header.width) * Int(header.height) * Int(sampleBits) / 2)
            var outcome = cwi_png_outcome()
            let status = cwi_png_decode_rgba(
                source, bytes.count, &pixels, pixels.count, header.width, header.height, 1, 0, 1, sampleBits, &outcome)
            return status == 0 && outcome.direct == 1
        }
    }

    @Test("the direct path takes every colour type, depth and interlacing, and leaves files libpng warned about to libpng")
    func whichPath() throws {
        for name in [
            "rgb8", "rgba8", "rgb8-trns", "gray8", "gray8-trns", "graya8", "palette8", "rgb16", "rgba16", "gray16", "graya16",
            "palette4", "palette1", "gray1", "gray2", "palette4-interlaced",
        ] {
            #expect(Self.decodesDirectly(try Fixture.data("png-suite/\(name).png")), "\(name) goes direct")
        }
        #expect(Self.decodesDirectly(try Fixture.data("gradient-interlaced.png")))
        #expect(Self.decodesDirectly(try Fixture.data("png-suite/rgba16-interlaced.png"), sampleBits: 16))
        for name in [
            "quirks/png-bad-text-crc.png", "quirks/png-iccp-unknown-compression.png", "quirks/png-truncated-idat.png",
            "quirks/png-bad-idat-crc.png",
        ] {
            #expect(!Self.decodesDirectly(try Fixture.data(name)), "\(name) goes to libpng")
        }
        #expect(Self.fixtures.filter { (try? Fixture.data($0)).map { Self.decodesDirectly($0) } == true }.count >= 60)
    }

    /// Every colour type at every depth PNG allows for it (specification, table 11.1), each with
    /// and without a tRNS chunk.
    static let specCases: [(colorType: UInt8, depth: Int, keyed: Bool)] = [
        (0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (2, 8), (2, 16), (3, 1), (3, 2), (3, 4), (3, 8), (4, 8), (4, 16), (6, 8), (6, 16),
    ].flatMap { colorType, depth in (colorType & 4 == 0 ? [false, true] : [false]).map { (colorType, depth, $0) } }

    /// A SpecPNG of the case: a full palette (entries 0 to 2^depth - 1) with alphas for its first
    /// half when keyed, else a key of the first pixel's samples (two bytes each, as tRNS holds them).
    static func specFile(_ colorType: UInt8, _ depth: Int, keyed: Bool, width: Int, height: Int, interlaced: Bool) -> Data {
        let samples = SpecPNG.samples(width: width, height: height, colorType: colorType, depth: depth, seed: UInt32(width * 31 + height))
        var file = SpecPNG(width: width, height: height, colorType: colorType, depth: depth, interlaced: interlaced, samples: samples)
        if colorType == 3 {
            let entries = 1 << depth
            file.palette = (0..<(entries * 3)).map { UInt8(truncatingIfNeeded: $0 * 53 + 7) }
            if keyed { file.transparency = (0..<(entries / 2 + 1)).map { UInt8(truncatingIfNeeded: $0 * 97) } }
        } else if keyed {
            file.transparency = samples.prefix(SpecPNG.channels(colorType)).flatMap { [UInt8($0 >> 8), UInt8($0 & 255)] }
        }
        return file.encoded()
    }

    @Test("every colour type, depth and tRNS, interlaced or not, written after the specification: both paths agree, directly")
    func everyLayout() throws {
        let quarter = DecodeOptions(thumbnail: ThumbnailSize(width: 4, height: 8))
        var keeping = DecodeOptions()
        keeping.keepsHighBitDepth = true
        for (colorType, depth, keyed) in Self.specCases {
            for interlaced in [false, true] {
                for (width, height) in [(1, 1), (3, 2), (7, 5), (9, 9), (17, 33), (33, 40)] {
                    let file = Self.specFile(colorType, depth, keyed: keyed, width: width, height: height, interlaced: interlaced)
                    let label = "type \(colorType) depth \(depth) tRNS \(keyed) Adam7 \(interlaced) \(width)x\(height)"
                    #expect(Self.decodesDirectly(file), "\(label) goes direct")
                    for (variant, options) in Self.decodeVariants + [("reduced by four", quarter)] {
                        Self.expectSameDecode(file, options: options, "\(label) \(variant)")
                    }
                    Self.expectSameDecode(
                        file.prefix(file.count * 2 / 3), options: DecodeOptions(acceptsTruncatedImages: true), "\(label) cut")
                    if depth == 16 {
                        #expect(Self.decodesDirectly(file, sampleBits: 16), "\(label) goes direct at 16 bits")
                        Self.expectSameDecode(file, options: keeping, "\(label) 16 bits")
                    }
                }
            }
        }
    }

    @Test("written photos, whole and cut short, damaged, with extra data: both paths agree")
    func damagedAndTruncated() throws {
        for alpha in [false, true] {
            let encoded = try PNGCoder().encode(
                Image(pixels: Self.photo(width: 301, height: 97, alpha: alpha)), as: .png, options: EncodeOptions())
            #expect(Self.decodesDirectly(encoded))
            for (variant, options) in Self.decodeVariants {
                Self.expectSameDecode(encoded, options: options, "alpha \(alpha) \(variant)")
                for cut in [60, encoded.count / 3, encoded.count / 2, encoded.count - 13, encoded.count - 12] {
                    Self.expectSameDecode(encoded.prefix(cut), options: options, "alpha \(alpha) \(variant) cut at \(cut)")
                }
                var damaged = encoded
                damaged[damaged.count / 2] ^= 0x55  // inside the IDAT: its CRC no longer matches
                Self.expectSameDecode(damaged, options: options, "alpha \(alpha) \(variant) damaged")
            }
        }
    }

    @Test("sizes around the sixteen-row bands, RGB and RGBA: both paths agree")
    func bandEdges() throws {
        for (width, height) in [(1, 1), (2, 3), (5, 40), (15, 17), (16, 16), (17, 33), (33, 15), (40, 48)] {
            for alpha in [false, true] {
                let encoded = try PNGCoder().encode(
                    Image(pixels: Self.photo(width: width, height: height, alpha: alpha)), as: .png, options: EncodeOptions())
                #expect(Self.decodesDirectly(encoded), "\(width)x\(height) goes direct")
                // A quarter-size thumbnail reduces by four while reading (four-pixel blocks).
                let quarter = DecodeOptions(thumbnail: ThumbnailSize(width: max(1, width / 4), height: max(1, height / 4)))
                for (variant, options) in Self.decodeVariants + [("reduced by four", quarter)] {
                    Self.expectSameDecode(encoded, options: options, "\(width)x\(height) alpha \(alpha) \(variant)")
                }
            }
        }
    }

    @Test("an interlaced PNG is reduced by the same block averages as the plain one, after its whole decode; cut short, what arrived")
    func interlacedReduction() throws {
        for alpha in [false, true] {
            // Large enough that the cut below leaves whole reads of libpng's (8 KB) in the data.
            let picture = Image(pixels: Self.photo(width: 600, height: 400, alpha: alpha))
            let plain = try PNGCoder().encode(picture, as: .png, options: EncodeOptions())
            var interlacing = EncodeOptions()
            interlacing.pngInterlaced = true
            let interlaced = try PNGCoder().encode(picture, as: .png, options: interlacing)
            // A 147x97 thumbnail: reduced by four (150x100), the same blocks either way.
            let options = DecodeOptions(thumbnail: ThumbnailSize(width: 147, height: 97, preservesAspectRatio: false, resamples: false))
            let reduced = try PNGCoder().decode(interlaced, options: options)
            #expect(reduced.pixelWidth == 150 && reduced.pixelHeight == 100)
            #expect(reduced.pixels == (try PNGCoder().decode(plain, options: options)).pixels, "alpha \(alpha)")
            // The whole image is held before it is reduced: the limit counts it.
            var limited = options
            limited.limits = DecodeLimits(maximumPixelCount: 600 * 400 - 1)
            #expect(throws: WebImageError.self) { try PNGCoder().decode(interlaced, options: limited) }
            var lenient = options
            lenient.acceptsTruncatedImages = true
            let cut = try PNGCoder().decode(interlaced.prefix(interlaced.count * 2 / 3), options: lenient)
            #expect(cut.isPartial && cut.pixelWidth == 150 && cut.pixelHeight == 100)
            #expect(cut.pixels.bytes.contains { $0 != 0 }, "alpha \(alpha): the passes that arrived are shown")
        }
    }

    /// PNG's filters reversed one row at a time as the specification defines them (section 9:
    /// None, Sub, Up, Average, Paeth, the samples left of the first pixel and above the first row
    /// being zero), the reference for the sixteen-row unfiltering.
    static func unfiltered(_ filtered: [UInt8], width: Int, height: Int, bpp: Int) -> [UInt8] {
        var bytes = filtered
        let stride = width * bpp + 1
        for y in 0..<height {
            for i in 0..<(width * bpp) {
                let at = y * stride + 1 + i
                let left = i >= bpp ? Int(bytes[at - bpp]) : 0
                let above = y > 0 ? Int(bytes[at - stride]) : 0
                let upperLeft = y > 0 && i >= bpp ? Int(bytes[at - stride - bpp]) : 0
                let prediction = SpecPNG.prediction(Int(bytes[y * stride]), left: left, above: above, upperLeft: upperLeft)
                bytes[at] = UInt8(truncatingIfNeeded: Int(bytes[at]) + prediction)
            }
        }
        return bytes
    }

    @Test("sixteen rows unfiltered at once give the specification's bytes, every filter in every lane")
    func sixteenRowUnfiltering() {
        var seed: UInt32 = 2024
        func next() -> UInt8 {
            seed = seed &* 1_103_515_245 &+ 12345
            return UInt8(truncatingIfNeeded: seed >> 16)
        }
        for bpp in [3, 4] {
            for (width, height) in [(1, 1), (1, 20), (3, 16), (15, 17), (16, 33), (17, 5), (64, 50)] {
                let stride = width * bpp + 1
                var filtered = (0..<(stride * height)).map { _ in next() }
                for y in 0..<height { filtered[y * stride] = next() % 5 }
                let expected = Self.unfiltered(filtered, width: width, height: height, bpp: bpp)
                // The rows and the one byte past them the band may read.
                var rows = filtered + [0]
                var bands = 0
                rows.withUnsafeMutableBufferPointer { buffer in
                    var y = 0
                    while y < height {
                        let row = buffer.baseAddress! + y * stride
                        let prior = y == 0 ? nil : UnsafePointer(row - stride + 1)
                        let done = Int(cwi_png_unfilter_band(row, stride, UInt32(height - y), prior, UInt32(width), UInt32(bpp)))
                        // x86-64 with AVX2 (every machine CI and the benchmarks run on) has the
                        // wavefront; elsewhere the decoder unfilters row by row and this says so.
                        #if arch(x86_64)
                        #expect(done == min(16, height - y), "\(width)x\(height) bpp \(bpp): a band of the rows left")
                        #else
                        #expect(done == 0)
                        #endif
                        guard done > 0 else { return }
                        y += done
                        bands += 1
                    }
                }
                #if arch(x86_64)
                #expect(bands == (height + 15) / 16)
                #expect(Array(rows.prefix(stride * height)) == expected, "\(width)x\(height) bpp \(bpp)")
                #endif
                #expect(rows.last == 0, "the byte past the rows is left as it was")
            }
        }
    }

    @Test("Sub reversed with vectors gives the specification's bytes, RGB and RGBA, every length around the steps")
    func vectorSub() {
        var seed: UInt32 = 7
        for bpp in [3, 4] {
            for length in [0, 3, 4, 12, 15, 16, 17, 27, 28, 31, 32, 33, 100, 6144] where length % bpp == 0 {
                let filtered = (0..<length).map { _ -> UInt8 in
                    seed = seed &* 1_103_515_245 &+ 12345
                    return UInt8(truncatingIfNeeded: seed >> 16)
                }
                // PNG's Sub: each byte plus the unfiltered byte one pixel to its left (0 for the first pixel).
                var expected = filtered
                for index in bpp..<max(bpp, length) { expected[index] = expected[index] &+ expected[index - bpp] }
                var row = filtered
                let done = row.withUnsafeMutableBufferPointer { cwi_png_unsub($0.baseAddress, length, UInt32(bpp)) }
                #if arch(x86_64)
                #expect(done == 1)
                #expect(row == expected, "bpp \(bpp), \(length) bytes")
                #else
                #expect(done == 0)
                #endif
            }
        }
    }

    @Test("palette indexes past the palette read as libpng reads them: black and opaque")
    func indexesPastThePalette() throws {
        let indexes = (0..<64).map { UInt8($0 % 6) }
        let palette: [UInt8] = [10, 20, 30, 255, 40, 50, 60, 128]
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        try #require(
            cwi_png_compress_image(indexes, 8, 8, 1, 8, cwi_png_write_options(level: 6, interlaced: 0, palette: 1), &output, &size) == 0)
        let imageData = Array(UnsafeBufferPointer(start: try #require(output), count: size))
        cwi_png_free(output)
        let encoded = PNGCoder.file(
            width: 8, height: 8, bitDepth: 8, colorType: 3, interlaced: false, palette: palette, imageData: imageData)
        #expect(Self.decodesDirectly(encoded))
        Self.expectSameDecode(encoded, options: DecodeOptions(), "indexes past the palette")
        let decoded = try encoded.withUnsafeBytes { try PNGCoder().decodeStill($0, options: DecodeOptions(), direct: true) }
        #expect(Array(decoded.pixels.bytes[0..<12]) == [10, 20, 30, 255, 40, 50, 60, 128, 0, 0, 0, 255])
    }

    @Test("RGB, RGBA, every level, interlaced or not, odd sizes: libpng reads back the same pixels")
    func encoderRoundTrips() throws {
        let images = [
            Self.photo(width: 1, height: 1, alpha: false), Self.photo(width: 3, height: 7, alpha: true),
            Self.photo(width: 9, height: 2, alpha: false), Self.photo(width: 130, height: 67, alpha: true),
            Self.photo(width: 130, height: 67, alpha: false),
        ]
        for pixels in images {
            for level in [0, 1, 6, 9] {
                for interlaced in [false, true] {
                    var options = EncodeOptions()
                    options.pngCompressionLevel = level
                    options.pngInterlaced = interlaced
                    let encoded = try PNGCoder().encode(Image(pixels: pixels), as: .png, options: options)
                    let header = Array(encoded[16..<29])
                    #expect(header[8] == 8 && header[9] == (pixels.isOpaque ? 2 : 6) && header[12] == (interlaced ? 1 : 0))
                    let decoded = try encoded.withUnsafeBytes { bytes in
                        try PNGCoder().decodeStill(bytes, options: DecodeOptions(), direct: false)
                    }
                    #expect(decoded.pixels == pixels, "\(pixels.width)x\(pixels.height) level \(level) interlaced \(interlaced)")
                }
            }
        }
    }

    @Test("a grey picture is written grey (colour type 0, 4 with alpha) at 8 and 16 bits, interlaced or not; libpng reads the same pixels")
    func greyRoundTrips() throws {
        for alpha in [false, true] {
            let photo = Self.photo(width: 37, height: 19, alpha: alpha)
            // The photo's red channel as grey: red, green and blue equal in every pixel.
            let grey = PixelBuffer(
                width: 37, height: 19,
                straightRGBA: (0..<photo.bytes.count).map { index in index % 4 == 3 ? photo.bytes[index] : photo.bytes[index - index % 4] })
            let wide = PixelBuffer(
                width: 37, height: 19,
                straightRGBA16: grey.bytes.enumerated().map { $0.offset % 4 == 3 ? UInt16($0.element) * 257 : UInt16($0.element) * 256 + 3 }
            )
            for (pixels, depth) in [(grey, 8), (wide, 16)] {
                for interlaced in [false, true] {
                    var options = EncodeOptions()
                    options.pngInterlaced = interlaced
                    let encoded = try PNGCoder().encode(Image(pixels: pixels), as: .png, options: options)
                    #expect(Int(encoded[24]) == depth && encoded[25] == (alpha ? 4 : 0), "\(depth)-bit, alpha \(alpha)")
                    var reading = DecodeOptions()
                    reading.keepsHighBitDepth = true
                    let decoded = try encoded.withUnsafeBytes { try PNGCoder().decodeStill($0, options: reading, direct: false) }
                    #expect(decoded.pixels == pixels, "\(depth)-bit, alpha \(alpha), interlaced \(interlaced)")
                }
            }
        }
        // A grey picture kept with an RGB profile stays RGB: a PNG's iCCP matches its colour type.
        var profiled = Image(pixels: PixelBuffer(width: 2, height: 1, straightRGBA: [9, 9, 9, 255, 200, 200, 200, 255]))
        profiled.colorProfile = try Fixture.data("color/display-p3.icc")
        #expect(try PNGCoder().encode(profiled, as: .png, options: EncodeOptions())[25] == 2)
    }

    @Test("higher levels write smaller files; level 0 stores; the default is 4")
    func levels() throws {
        let image = Image(pixels: Self.photo(width: 256, height: 256, alpha: false))
        func size(_ level: Int) throws -> Int {
            var options = EncodeOptions()
            options.pngCompressionLevel = level
            return try PNGCoder().encode(image, as: .png, options: options).count
        }
        #expect(EncodeOptions().pngCompressionLevel == 4)
        let stored = try size(0)
        let fast = try size(1)
        let standard = try size(6)
        let smallest = try size(9)
        // Stored: every row's filter byte and samples, plus zlib's framing.
        #expect(stored > 256 * (256 * 3 + 1))
        #expect(fast < stored && standard <= fast && smallest <= standard, "\(stored) \(fast) \(standard) \(smallest)")
    }

    /// Why the default is libdeflate's 4: the files of libvips and imgproxy are zlib's level 6.
    @Test("the default level writes files within 3% of zlib's level 6 on the same rows")
    func defaultLevelMatchesZlibSix() throws {
        // Camera grain: a gradient with every sample off by up to 31.
        var seed: UInt32 = 7
        let grain = PixelBuffer(
            width: 192, height: 128,
            straightRGBA: (0..<192 * 128 * 4).map { index in
                seed = seed &* 1_103_515_245 &+ 12345
                return index % 4 == 3 ? 255 : UInt8(truncatingIfNeeded: index / 4 % 192 + index / 768 + Int(seed >> 27))
            })
        for (label, pixels) in [("photo", Self.photo(width: 256, height: 256, alpha: false)), ("grain", grain)] {
            let standard = try PNGCoder().encode(Image(pixels: pixels), as: .png, options: EncodeOptions())
            let rows = try Self.inflatedImageData(standard)
            var zlibSize = compressBound(uLong(rows.count))
            var zlibOutput = [UInt8](repeating: 0, count: Int(zlibSize))
            try #require(compress2(&zlibOutput, &zlibSize, rows, uLong(rows.count), 6) == Z_OK)
            let ours = PNGChunks.all(standard).filter { $0.type == "IDAT" }.reduce(0) { $0 + $1.data.count }
            #expect(Double(ours) <= Double(zlibSize) * 1.03, "\(label): \(ours) bytes against zlib's \(zlibSize)")
        }
    }

    @Test("the adaptive filter picks different filters for different rows, as libpng's heuristic does")
    func adaptiveFilters() throws {
        let pixels = Self.photo(width: 200, height: 120, alpha: false)
        let encoded = try PNGCoder().encode(Image(pixels: pixels), as: .png, options: EncodeOptions())
        let rows = try Self.inflatedImageData(encoded)
        let filters = Set((0..<120).map { rows[$0 * (200 * 3 + 1)] })
        #expect(filters.count >= 2 && filters.allSatisfy { $0 <= 4 }, "\(filters)")
    }

    @Test("a palette keeps an image's own colours exactly, with the fewest bits imgproxy would choose")
    func exactPalette() throws {
        var bytes = [UInt8]()
        let colors: [[UInt8]] = [[255, 0, 0, 255], [0, 0, 255, 128], [10, 200, 30, 0]]
        for index in 0..<(40 * 30) { bytes += colors[(index / 7 + index / 40) % 3] }
        let pixels = PixelBuffer(width: 40, height: 30, straightRGBA: bytes)
        for (limit, depth) in [(256, 8), (16, 4), (4, 2), (3, 2)] {
            var options = EncodeOptions()
            options.pngPaletteColors = limit
            let encoded = try PNGCoder().encode(Image(pixels: pixels), as: .png, options: options)
            #expect(encoded[24] == UInt8(depth) && encoded[25] == 3, "\(limit) colours: depth \(encoded[24])")
            #expect(PNGChunks.types(encoded) == ["IHDR", "sRGB", "PLTE", "tRNS", "IDAT", "IEND"])
            let decoded = try encoded.withUnsafeBytes { try PNGCoder().decodeStill($0, options: DecodeOptions(), direct: false) }
            #expect(decoded.pixels == pixels, "\(limit) colours")
        }
    }

    @Test("a photo quantised to 256 or 16 colours stays close and gets smaller; an opaque one has no tRNS")
    func quantisedPhoto() throws {
        let pixels = Self.photo(width: 256, height: 160, alpha: false)
        let full = try PNGCoder().encode(Image(pixels: pixels), as: .png, options: EncodeOptions())
        // Bounds: Pillow 12.3's median cut with Floyd-Steinberg on this same image (the generator
        // rewritten in Python) is off by 7.40 (256 colours) and 31.8 (16) per RGB sample on
        // average; ours may be up to 15% worse than that.
        for (limit, tolerance) in [(256, 7.40 * 1.15), (16, 31.8 * 1.15)] {
            var options = EncodeOptions()
            options.pngPaletteColors = limit
            let encoded = try PNGCoder().encode(Image(pixels: pixels), as: .png, options: options)
            #expect(encoded.count < full.count, "\(limit): \(encoded.count) against \(full.count)")
            #expect(!PNGChunks.types(encoded).contains("tRNS"))
            let decoded = try encoded.withUnsafeBytes { try PNGCoder().decodeStill($0, options: DecodeOptions(), direct: false) }
            let difference = zip(decoded.pixels.bytes, pixels.bytes).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
            let mean = Double(difference) / Double(pixels.width * pixels.height * 3)  // alpha stays 255: no error
            #expect(mean < tolerance, "\(limit) colours: mean difference \(mean)")
            let paletteSize = try #require(PNGChunks.chunk("PLTE", in: encoded)).count / 3
            #expect(paletteSize <= limit && paletteSize > limit / 2, "\(paletteSize) entries for \(limit)")
        }
    }

    @Test("an animated PNG ignores the palette option and stays exact")
    func animationKeepsColours() throws {
        let frames = [false, true].map { ImageFrame(pixels: Self.photo(width: 20, height: 10, alpha: $0), duration: .milliseconds(100)) }
        var options = EncodeOptions()
        options.pngPaletteColors = 2
        let encoded = try PNGCoder().encode(Image(frames: frames, hasAlpha: true), as: .png, options: options)
        let decoded = try PNGCoder().decode(encoded, options: DecodeOptions())
        #expect(decoded.frames.map(\.pixels) == frames.map(\.pixels))
    }

    // MARK: Reading chunks

    /// The filtered rows: every IDAT joined and inflated.
    static func inflatedImageData(_ png: Data) throws -> [UInt8] {
        let compressed = PNGChunks.all(png).filter { $0.type == "IDAT" }.reduce(Data()) { $0 + $1.data }
        var size = uLongf(64 << 20)
        var output = [UInt8](repeating: 0, count: Int(size))
        let status = compressed.withUnsafeBytes { input in
            uncompress(&output, &size, input.baseAddress?.assumingMemoryBound(to: Bytef.self), uLong(compressed.count))
        }
        try #require(status == Z_OK)
        return Array(output[..<Int(size)])
    }
}
