import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// The encoder options users of `convert`, the cache serializer and the proxy need: JPEG chroma
/// subsampling and progressive output, WebP's method, and SDWebImage's maximum file size.
@Suite("Encode options")
struct EncodeOptionsTests {
    let photo: Image

    init() throws {
        photo = try CodersManager.shared.decode(try Fixture.data("gradient.jpg"))
    }

    /// The start-of-frame marker's type (0xC0 baseline, 0xC2 progressive) and the first
    /// component's sampling factors (0x22 for 4:2:0, 0x21 for 4:2:2, 0x11 for 4:4:4).
    private func frameHeader(_ jpeg: Data) throws -> (marker: UInt8, sampling: UInt8) {
        let bytes = [UInt8](jpeg)
        var offset = 2
        while offset + 4 < bytes.count {
            #expect(bytes[offset] == 0xFF)
            let marker = bytes[offset + 1]
            if marker == 0xC0 || marker == 0xC2 { return (marker, bytes[offset + 11]) }
            offset += 2 + (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]))
        }
        throw WebImageError(.decodeFailed, "no start of frame")
    }

    private func largestDifference(_ image: Image, _ reference: Image) -> Int {
        zip(image.pixels.bytes, reference.pixels.bytes).map { abs(Int($0) - Int($1)) }.max() ?? 255
    }

    @Test("JPEG: 4:4:4, 4:2:2 and 4:2:0, baseline or progressive, each decoding close to the source")
    func jpegSubsamplingAndProgressive() throws {
        let expected: [EncodeOptions.ChromaSubsampling: UInt8] = [.none: 0x11, .horizontal: 0x21, .both: 0x22]
        for subsampling in EncodeOptions.ChromaSubsampling.allCases {
            for progressive in [false, true] {
                let options = EncodeOptions(quality: 1, chromaSubsampling: subsampling, progressive: progressive)
                let jpeg = try CodersManager.shared.encode(photo, as: .jpeg, options: options)
                let header = try frameHeader(jpeg)
                #expect(header.marker == (progressive ? 0xC2 : 0xC0), "\(subsampling) progressive \(progressive)")
                #expect(header.sampling == expected[subsampling], "\(subsampling)")
                let decoded = try CodersManager.shared.decode(jpeg)
                #expect(largestDifference(decoded, photo) <= (subsampling == .none ? 8 : 40), "\(subsampling)")
            }
        }
        #expect(try frameHeader(try CodersManager.shared.encode(photo, as: .jpeg)).sampling == 0x22, "4:2:0 by default")
    }

    @Test("WebP: the method changes the encoding, not what it decodes to")
    func webPMethod() throws {
        let fastest = try CodersManager.shared.encode(photo, as: .webP, options: EncodeOptions(quality: 0.8, webPMethod: 0))
        let smallest = try CodersManager.shared.encode(photo, as: .webP, options: EncodeOptions(quality: 0.8, webPMethod: 6))
        #expect(fastest != smallest)
        for data in [fastest, smallest] {
            let decoded = try CodersManager.shared.decode(data)
            #expect(decoded.pixelWidth == 64 && largestDifference(decoded, photo) <= 48)
        }
        let lossless = try CodersManager.shared.encode(photo, as: .webP, options: EncodeOptions(lossless: true, webPMethod: 6))
        #expect(try CodersManager.shared.decode(lossless).pixels == photo.pixels)
    }

    @Test("a maximum file size picks the highest quality that fits, the lowest when none does")
    func maximumFileSize() throws {
        func jpeg(_ percent: Int) throws -> Data {
            try CodersManager.shared.encode(photo, as: .jpeg, options: EncodeOptions(quality: Double(percent) / 100))
        }
        let sizes = try (1...90).map { try jpeg($0).count }
        let limit = sizes[49]  // quality 50's size
        let fitted = try CodersManager.shared.encode(photo, as: .jpeg, options: EncodeOptions(quality: 0.9, maximumFileSize: limit))
        #expect(fitted.count <= limit)
        let chosen = try #require((1...90).last { sizes[$0 - 1] == fitted.count && (try? jpeg($0)) == fitted })
        #expect(chosen >= 50, "quality \(chosen) where 50 fits")
        let roomy = try CodersManager.shared.encode(photo, as: .jpeg, options: EncodeOptions(quality: 0.9, maximumFileSize: 1 << 30))
        #expect(roomy == (try jpeg(90)), "when the asked quality fits, it is used")
        let tiny = try CodersManager.shared.encode(photo, as: .jpeg, options: EncodeOptions(quality: 0.9, maximumFileSize: 10))
        #expect(tiny == (try jpeg(1)), "when nothing fits, the lowest quality")
        let webP = try CodersManager.shared.encode(photo, as: .webP, options: EncodeOptions(quality: 0.9, maximumFileSize: limit))
        #expect(webP.count <= limit)
    }

    @Test("convert takes --progressive, --subsampling, --max-file-size, --webp-method and the PNG options; bad values are usage errors")
    func commandLine() async throws {
        let workspace = try CommandWorkspace()
        let source = Fixture.url("gradient.jpg").path
        let run = try await workspace.run(["convert", source, workspace.path("a.jpg"), "--progressive", "--subsampling", "444"])
        #expect(run.status == 0, "\(run.standardError)")
        let header = try frameHeader(try #require(FileManager.default.contents(atPath: workspace.path("a.jpg"))))
        #expect(header.marker == 0xC2 && header.sampling == 0x11)
        let small = try await workspace.run(["convert", source, workspace.path("b.webp"), "--max-file-size", "600", "--webp-method", "6"])
        #expect(small.status == 0, "\(small.standardError)")
        let written = try #require(FileManager.default.contents(atPath: workspace.path("b.webp")))
        let decoded = try CodersManager.shared.decode(written)
        #expect(written.count <= 600 && decoded.pixelWidth == 64)
        let palette = try await workspace.run([
            "convert", source, workspace.path("d.png"), "--png-palette", "4", "--png-interlaced", "--png-compression", "9",
        ])
        #expect(palette.status == 0, "\(palette.standardError)")
        let png = try #require(FileManager.default.contents(atPath: workspace.path("d.png")))
        #expect([png[24], png[25], png[28]] == [2, 3, 1], "2-bit palette, Adam7")
        let pixels = try CodersManager.shared.decode(png).pixels.bytes
        #expect(Set(stride(from: 0, to: pixels.count, by: 4).map { Array(pixels[$0..<$0 + 4]) }).count <= 4)
        for bad in [
            ["--subsampling", "411"], ["--webp-method", "9"], ["--max-file-size", "0"], ["--png-palette", "1"],
            ["--png-compression", "10"],
        ] {
            let refused = try await workspace.run(["convert", source, workspace.path("c.jpg")] + bad)
            #expect(refused.status == 2, "\(bad): \(refused.status) \(refused.standardError)")
        }
    }
}

/// The pixel limit bounds what a decoder allocates: a JPEG scaled in the DCT, or a lossy WebP
/// scaled as it decodes, is checked at its output size; the declared size has its own larger cap.
@Suite("Limits on what is allocated")
struct AllocatedLimitTests {
    @Test("a JPEG over the pixel limit decodes as a thumbnail the DCT brings under it; the declared cap still refuses")
    func jpeg() throws {
        let jpeg = try Fixture.data("gradient.jpg")  // 64x48: 3,072 pixels
        let limits = DecodeLimits(maximumPixelCount: 1_000, maximumDeclaredPixelCount: 4_000)
        #expect(throws: WebImageError(.tooLarge)) { try CodersManager.shared.decode(jpeg, options: DecodeOptions(limits: limits)) }
        let thumbnail = DecodeOptions(limits: limits, thumbnail: ThumbnailSize(width: 16, height: 12))
        let small = try CodersManager.shared.decode(jpeg, options: thumbnail)
        #expect(small.pixelWidth == 16 && small.pixelHeight == 12)
        var capped = thumbnail
        capped.limits.maximumDeclaredPixelCount = 2_000
        #expect(throws: WebImageError(.tooLarge)) { try CodersManager.shared.decode(jpeg, options: capped) }
        let progressive = try #require(CodersManager.shared.incrementalDecoder(for: jpeg, options: thumbnail))
        #expect(progressive.update(jpeg)?.pixelWidth == 16)
    }

    @Test("a lossy WebP is checked at its scaled size, a lossless one at its whole size")
    func webP() throws {
        let image = try CodersManager.shared.decode(try Fixture.data("gradient.jpg"))
        let limits = DecodeLimits(maximumPixelCount: 1_000)
        let thumbnail = DecodeOptions(limits: limits, thumbnail: ThumbnailSize(width: 16, height: 12))
        let lossy = try CodersManager.shared.encode(image, as: .webP, options: EncodeOptions(quality: 0.8))
        #expect(try CodersManager.shared.decode(lossy, options: thumbnail).pixelWidth == 16)
        let lossless = try CodersManager.shared.encode(image, as: .webP, options: EncodeOptions(lossless: true))
        #expect(throws: WebImageError(.tooLarge)) { try CodersManager.shared.decode(lossless, options: thumbnail) }
    }
}

/// A PNG thumbnail is reduced while the rows are read: each block averaged (colour weighted by
/// alpha), then resampled the rest of the way; only a row of the source is held.
@Suite("PNG thumbnails reduced while read")
struct ReducedPNGTests {
    /// 640x480 with a gradient, a hard edge and translucency.
    private func source() throws -> (png: Data, straight: [UInt8]) {
        var straight = [UInt8](repeating: 0, count: 640 * 480 * 4)
        for y in 0..<480 {
            for x in 0..<640 {
                let offset = (y * 640 + x) * 4
                straight[offset] = UInt8(x * 255 / 639)
                straight[offset + 1] = UInt8(y * 255 / 479)
                straight[offset + 2] = x > 320 ? 250 : 10
                straight[offset + 3] = UInt8((x + y) % 256)
            }
        }
        let image = Image(pixels: PixelBuffer(width: 640, height: 480, straightRGBA: straight))
        return (try CodersManager.shared.encode(image, as: .png), straight)
    }

    @Test("each pixel is its 10x10 block's alpha-weighted average, and the pixel limit counts the reduced size")
    func blockAverages() throws {
        let (png, _) = try source()
        let whole = try CodersManager.shared.decode(png).pixels.bytes
        let options = DecodeOptions(limits: DecodeLimits(maximumPixelCount: 5_000), thumbnail: ThumbnailSize(width: 64, height: 48))
        let reduced = try CodersManager.shared.decode(png, options: options)
        #expect(reduced.pixelWidth == 64 && reduced.pixelHeight == 48)
        var expected = [UInt8](repeating: 0, count: 64 * 48 * 4)
        for by in 0..<48 {
            for bx in 0..<64 {
                var sums = [0, 0, 0, 0]
                for y in (by * 10)..<(by * 10 + 10) {
                    for x in (bx * 10)..<(bx * 10 + 10) {
                        let offset = (y * 640 + x) * 4
                        let alpha = Int(whole[offset + 3])
                        for channel in 0..<3 { sums[channel] += Int(whole[offset + channel]) * alpha }
                        sums[3] += alpha
                    }
                }
                let offset = (by * 64 + bx) * 4
                let alpha = (sums[3] + 50) / 100
                // A block whose alpha rounds to 0 is (0, 0, 0, 0), as every transparent pixel here.
                for channel in 0..<3 { expected[offset + channel] = UInt8(alpha == 0 ? 0 : (sums[channel] + sums[3] / 2) / sums[3]) }
                expected[offset + 3] = UInt8(alpha)
            }
        }
        #expect(reduced.pixels == PixelBuffer(width: 64, height: 48, straightRGBA: expected))
        #expect(throws: WebImageError(.tooLarge), "without a thumbnail the whole image is over the limit") {
            try CodersManager.shared.decode(png, options: DecodeOptions(limits: options.limits))
        }
    }

    @Test("an opaque picture's last column and band of blocks are narrower: each pixel is still its own block's average")
    func partialBlocks() throws {
        let (width, height) = (643, 483)
        var seed: UInt32 = 3
        let straight = (0..<width * height * 4).map { index -> UInt8 in
            seed = seed &* 1_103_515_245 &+ 12345
            return index % 4 == 3 ? 255 : UInt8(truncatingIfNeeded: seed >> 24)
        }
        let png = try CodersManager.shared.encode(
            Image(pixels: PixelBuffer(width: width, height: height, straightRGBA: straight)), as: .png)
        // Reduced by 10 while read: 65x49, the last column 3 pixels wide and the last band 3 rows high.
        let reduced = try PNGCoder().decode(png, options: DecodeOptions(thumbnail: ThumbnailSize(width: 64, height: 48)))
        #expect(reduced.pixelWidth == 65 && reduced.pixelHeight == 49)
        var expected = [UInt8](repeating: 255, count: 65 * 49 * 4)
        for by in 0..<49 {
            for bx in 0..<65 {
                let (columns, rows) = (bx * 10..<min(width, bx * 10 + 10), by * 10..<min(height, by * 10 + 10))
                let weight = 255 * columns.count * rows.count
                for channel in 0..<3 {
                    let sum = rows.reduce(0) { total, y in
                        columns.reduce(total) { $0 + Int(straight[(y * width + $1) * 4 + channel]) * 255 }
                    }
                    expected[(by * 65 + bx) * 4 + channel] = UInt8((sum + weight / 2) / weight)
                }
            }
        }
        #expect(reduced.pixels == PixelBuffer(width: 65, height: 49, straightRGBA: expected))
    }

    @Test("a box that is not a whole fraction is reached by resampling the rest of the way")
    func resampledTheRest() throws {
        let (png, _) = try source()
        let thumbnail = try CodersManager.shared.decode(png, options: DecodeOptions(thumbnail: ThumbnailSize(width: 100, height: 100)))
        #expect(thumbnail.pixelWidth == 100 && thumbnail.pixelHeight == 75)
    }
}

/// Issue 16's huge files (scripts/fixtures/make_huge.py), both over the default 64 MP limit:
/// thumbnails come out because the limit counts what is allocated (the JPEG decoded at 1/8, the
/// PNG averaged while read); decoded whole they are refused. Peak memory is measured beside
/// libvips in docs/benchmarks.md.
@Suite("Thumbnails of huge images")
struct HugeImageTests {
    @Test(arguments: [("gradient-12000x9000.jpg", 300, 225, 3), ("gradient-10000x10000.png", 300, 300, 1)])
    func thumbnailWithinTheDefaultLimits(name: String, width: Int, height: Int, tolerance: Int) throws {
        let data = try Fixture.data("huge/" + name)
        let image = try CodersManager.shared.decode(data, options: DecodeOptions(thumbnail: ThumbnailSize(width: 300, height: 300)))
        #expect(image.pixelWidth == width && image.pixelHeight == height)
        // Red runs across, green down, blue is 120: the thumbnail is the same picture.
        for (x, y) in [(0, 0), (width / 2, height / 2), (width - 1, height - 1)] {
            let pixel = image.pixels.pixel(x: x, y: y)
            let red = (x * 2 + 1) * 255 / (width * 2)
            let green = (y * 2 + 1) * 255 / (height * 2)
            #expect(
                abs(Int(pixel.red) - red) <= tolerance + 1 && abs(Int(pixel.green) - green) <= tolerance + 1,
                "\(name) at \(x),\(y): \(pixel)")
            #expect(abs(Int(pixel.blue) - 120) <= tolerance && pixel.alpha == 255)
        }
        #expect(throws: WebImageError(.tooLarge), "decoded whole, \(name) is over 64 MP") { try CodersManager.shared.decode(data) }
    }
}
