import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

@Suite("JPEG resized in YCbCr planes")
struct JPEGPlanarResizeTests {
    /// A photograph-like opaque picture: unless `smooth`, gradients with hard-edged blocks and
    /// noise; if `smooth`, waves of a few dozen pixels in each channel, steep enough that a plane
    /// resampled one sample off shows, with nothing for a re-encode to quantise differently.
    private static func photo(width: Int, height: Int, smooth: Bool = false) -> PixelBuffer {
        var random = SplitMix64(seed: 7)
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        func wave(_ position: Int, period: Double) -> UInt8 { UInt8(128 + 100 * sin(Double(position) * 2 * .pi / period)) }
        for y in 0..<height {
            for x in 0..<width {
                let offset = (y * width + x) * 4
                if smooth {
                    (bytes[offset], bytes[offset + 1], bytes[offset + 2]) = (
                        wave(x, period: 40), wave(y, period: 30), wave(x + y, period: 50)
                    )
                    continue
                }
                let noise = Int(random.next() % 24)
                let block = (x / 37 + y / 29) % 3 == 0 ? 90 : 0
                bytes[offset] = UInt8(min(255, x * 255 / max(1, width - 1) / 2 + noise + block))
                bytes[offset + 1] = UInt8(min(255, y * 255 / max(1, height - 1) / 2 + noise))
                bytes[offset + 2] = UInt8(min(255, (x + y) * 200 / max(1, width + height) + noise / 2 + block / 2))
            }
        }
        return PixelBuffer(width: width, height: height, straightRGBA: bytes)
    }

    private static func jpeg(
        _ pixels: PixelBuffer, chroma: EncodeOptions.ChromaSubsampling = .both, quality: Double = 0.92, progressive: Bool = false
    ) throws -> Data {
        var options = EncodeOptions(quality: quality)
        options.chromaSubsampling = chroma
        options.progressive = progressive
        return try JPEGCoder().encode(Image(pixels: pixels), as: .jpeg, options: options)
    }

    /// The general path the planar one stands in for: decoded at the same DCT scale to RGBA (the
    /// planar path's, which is one with a SIMD inverse DCT: the general decode of a thumbnail
    /// the planar size covers takes the same), resampled with the same filter, encoded at the
    /// same quality.
    private static func general(_ data: Data, _ resize: JPEGPlanarResize, as format: ImageFormat = .jpeg) throws -> Data {
        let header = try ImageHeader(data: data)
        let decoded = JPEGPlanarResize.decodedSize(width: header.width, height: header.height, target: (resize.width, resize.height))
        var options = DecodeOptions()
        options.thumbnail = ThumbnailSize(width: decoded.width, height: decoded.height, preservesAspectRatio: false, resamples: false)
        let image = try CodersManager.shared.decode(data, options: options)
        let transformer = ResizingTransformer(width: resize.width, height: resize.height, keeping: resize.window, filter: resize.filter)
        let resized = try #require(transformer.transform(image, forKey: ""))
        return try CodersManager.shared.encode(resized, as: format, options: EncodeOptions(quality: 0.9))
    }

    /// How far apart two decoded JPEGs are in luma (Rec. 601, the JPEG's own Y, which its
    /// decoder's chroma does not move) and in chroma (Cb and Cr): the means over all pixels.
    private static func difference(_ ours: Data, _ theirs: Data) throws -> (luma: Double, chroma: Double) {
        let (a, b) = (
            try CodersManager.shared.decode(ours, options: DecodeOptions()).pixels,
            try CodersManager.shared.decode(theirs, options: DecodeOptions()).pixels
        )
        #expect(a.width == b.width && a.height == b.height)
        func ycbcr(_ bytes: [UInt8], _ offset: Int) -> (Double, Double, Double) {
            let (r, g, b) = (Double(bytes[offset]), Double(bytes[offset + 1]), Double(bytes[offset + 2]))
            return (0.299 * r + 0.587 * g + 0.114 * b, -0.168736 * r - 0.331264 * g + 0.5 * b, 0.5 * r - 0.418688 * g - 0.081312 * b)
        }
        var (luma, chroma) = (0.0, 0.0)
        for offset in stride(from: 0, to: a.bytes.count, by: 4) {
            let (first, second) = (ycbcr(a.bytes, offset), ycbcr(b.bytes, offset))
            luma += abs(first.0 - second.0)
            chroma += (abs(first.1 - second.1) + abs(first.2 - second.2)) / 2
        }
        let count = Double(a.width * a.height)
        return (luma / count, chroma / count)
    }

    @Test(
        "the planar resize gives the general path's picture, to within rounding, for each subsampling, shrinking, cutting and enlarging",
        arguments: [EncodeOptions.ChromaSubsampling.both, .horizontal, .none])
    func matchesTheGeneralPath(chroma: EncodeOptions.ChromaSubsampling) throws {
        // Each with the bound of its chroma difference on the waves (below).
        let resizes = [
            // img2dataset's center_crop of 640x480 to 256: 341x256, the middle 256 kept (DCT 1/2).
            (
                JPEGPlanarResize(
                    width: 341, height: 256, window: ResizeWindow(x: 42, y: 0, width: 256, height: 256), filter: .bilinear),
                2.0
            ),
            // Odd sizes and an odd window origin, so that chroma samples fall between luma samples.
            (
                JPEGPlanarResize(
                    width: 203, height: 151, window: ResizeWindow(x: 7, y: 3, width: 101, height: 85), filter: .bilinear), 4.0
            ),
            (JPEGPlanarResize(width: 999, height: 749, filter: .lanczos3), 2.0),
            // The 1/2 decode's own size: no resampling, a cut copied straight from the planes
            // (lanczos3's taps start two pixels before the one they copy).
            (JPEGPlanarResize(width: 320, height: 240, window: ResizeWindow(x: 3, y: 5, width: 200, height: 101), filter: .lanczos3), 2.5),
        ]
        // Measured (mean levels, luma and chroma): on the waves, luma 0.21 to 0.67, chroma 0.89 to
        // 0.96, 1.75 to 2.34, 0.45 to 0.95 and 1.19 to 1.87 for the four (the paths' 4:2:0 chroma
        // is averaged over different neighbours; the cut from an odd row takes chroma between
        // rows; the planes are rounded once, the RGBA resampler's pixels after each pass); the
        // photograph, luma up to 0.96, chroma up to 1.36. With the luma window one
        // pixel off and the chroma half a sample off, the waves were luma 2.06 to 9.45 and chroma
        // 3.0 to 12.2 out, the photograph luma 3.2 to 5.5.
        for (resize, chromaBound) in resizes {
            for smooth in [true, false] {
                let source = try Self.jpeg(Self.photo(width: 640, height: 480, smooth: smooth), chroma: chroma)
                let ours = try #require(try resize.recompress(source, quality: 90, limits: DecodeLimits()))
                let decoded = try JPEGCoder().decode(ours, options: DecodeOptions())
                #expect(decoded.pixelWidth == resize.window.columns.count && decoded.pixelHeight == resize.window.rows.count)
                let difference = try Self.difference(ours, try Self.general(source, resize))
                let label = "\(chroma) to \(resize.width)x\(resize.height), \(smooth ? "waves" : "photograph")"
                #expect(difference.luma < (smooth ? 1.2 : 1.5), "\(label): luma \(difference.luma)")
                #expect(difference.chroma < (smooth ? chromaBound : 2.0), "\(label): chroma \(difference.chroma)")
            }
        }
    }

    @Test(
        "only the blocks the resize reads are decoded: a file cut short below them resizes as the whole file does, a progressive one is decoded whole",
        arguments: [EncodeOptions.ChromaSubsampling.both, .horizontal, .none])
    func window(chroma: EncodeOptions.ChromaSubsampling) throws {
        // A portrait photograph at 1/2 (240x320), a window in its upper part: the iMCU rows below
        // the filter's reach are never read, the columns beside it never transformed.
        let source = try Self.jpeg(Self.photo(width: 480, height: 640), chroma: chroma)
        let top = JPEGPlanarResize(width: 233, height: 311, window: ResizeWindow(x: 40, y: 10, width: 121, height: 60), filter: .lanczos3)
        let whole = try #require(try top.recompress(source, quality: 90, limits: DecodeLimits()))
        // Cut at 60% of its bytes, the file's lower rows are missing, which libjpeg warns of only
        // once it reads them.
        let cut = source.prefix(source.count * 6 / 10)
        #expect(try top.recompress(cut, quality: 90, limits: DecodeLimits()) == whole)
        let bottom = JPEGPlanarResize(
            width: 233, height: 311, window: ResizeWindow(x: 40, y: 240, width: 121, height: 60), filter: .lanczos3)
        #expect(try bottom.recompress(cut, quality: 90, limits: DecodeLimits()) == nil)
        #expect(try bottom.recompress(source, quality: 90, limits: DecodeLimits()) != nil)
        // A progressive encode holds the same coefficients in several scans, all read before the
        // first row: decoded whole, then resized to the same bytes.
        let progressive = try Self.jpeg(Self.photo(width: 480, height: 640), chroma: chroma, progressive: true)
        #expect(progressive != source)
        #expect(try top.recompress(progressive, quality: 90, limits: DecodeLimits()) == whole)
    }

    @Test("libjpeg-turbo's test files of every subsampling, baseline and progressive, odd sizes included, take the path")
    func corpusSubsamplings() throws {
        for size in ["16x12", "17x13", "33x7"] {
            for chroma in ["420", "422", "444"] {
                for suffix in ["", "-progressive"] {
                    let name = "corpus/jpeg-\(size)-q90-\(chroma)\(suffix).jpg"
                    let resize = JPEGPlanarResize(width: 9, height: 5, filter: .bilinear)
                    let result = try #require(try resize.recompress(try Fixture.data(name), quality: 90, limits: DecodeLimits()), "\(name)")
                    let decoded = try JPEGCoder().decode(result, options: DecodeOptions())
                    #expect(decoded.pixelWidth == 9 && decoded.pixelHeight == 5, "\(name)")
                }
            }
        }
    }

    @Test("files the path does not take: grey, CMYK, a profile other than sRGB, damage libjpeg warns of, not a JPEG")
    func declines() throws {
        let resize = JPEGPlanarResize(width: 8, height: 6, filter: .bilinear)
        for name in [
            "corpus/jpeg-grey-q90.jpg", "corpus/jpeg-cmyk-q95.jpg", "cmyk.jpg", "color/p3.jpg", "color/adobe-rgb.jpg",
            "quirks/jpeg-truncated.jpg", "quirks/jpeg-junk-before-sos.jpg", "gradient-rgba.png",
        ] {
            #expect(try resize.recompress(try Fixture.data(name), quality: 90, limits: DecodeLimits()) == nil, "\(name)")
        }
        // EXIF the caller would keep declines the file before its pixels are decoded.
        let camera = try Fixture.data("exif/camera.jpg")
        var asked: Data?
        #expect(
            try resize.decode(camera, limits: DecodeLimits()) { exif in
                asked = exif
                return true
            } == nil)
        #expect(asked.map { ["II", "MM"].contains(String(decoding: $0.prefix(2), as: UTF8.self)) } == true, "the file's EXIF, as TIFF")
        #expect(try resize.decode(camera, limits: DecodeLimits()) { _ in false } != nil)
        // A profile that describes sRGB itself converts nothing: the path takes the file.
        #expect(try resize.recompress(try Fixture.data("color/srgb.jpg"), quality: 90, limits: DecodeLimits()) != nil)
    }

    @Test("truncated and garbled JPEGs of each subsampling: a result, a decline or a thrown error, never a crash")
    func damagedCopies() throws {
        let resize = JPEGPlanarResize(width: 61, height: 47, window: ResizeWindow(x: 3, y: 1, width: 55, height: 43), filter: .lanczos3)
        var generator = SplitMix64(seed: 29)
        for chroma in EncodeOptions.ChromaSubsampling.allCases {
            let source = try Self.jpeg(Self.photo(width: 160, height: 120), chroma: chroma)
            var copies = stride(from: 0, to: source.count, by: source.count / 40).map { source.prefix($0) }
            for _ in 0..<60 {
                var garbled = source
                for _ in 0..<4 {
                    garbled[Int.random(in: 0..<garbled.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
                copies.append(garbled)
            }
            for copy in copies {
                guard let result = try? resize.recompress(copy, quality: 90, limits: DecodeLimits()) else { continue }
                // A copy the path took is a whole image of the asked size.
                let header = try ImageHeader(data: result)
                #expect(header.width == 55 && header.height == 43)
            }
        }
    }

    @Test("the decode limits apply as the general decode applies them")
    func limits() throws {
        let source = try Self.jpeg(Self.photo(width: 320, height: 240))
        let resize = JPEGPlanarResize(width: 160, height: 120, filter: .bilinear)
        #expect(throws: WebImageError.self) {
            try resize.recompress(source, quality: 90, limits: DecodeLimits(maximumPixelCount: 10_000, maximumDeclaredPixelCount: 10_000))
        }
        // Declared 320x240 is allowed, but the 1/2 DCT scale still makes 160x120 pixels.
        #expect(throws: WebImageError.self) {
            try resize.recompress(source, quality: 90, limits: DecodeLimits(maximumPixelCount: 10_000, maximumDeclaredPixelCount: 100_000))
        }
        #expect(
            try resize.recompress(source, quality: 90, limits: DecodeLimits(maximumPixelCount: 20_000, maximumDeclaredPixelCount: 100_000))
                != nil)
    }

    /// libjpeg-turbo 2.1's SIMD inverse DCTs are the full 8x8 (jsimd_idct_islow), 4x4 and 2x2
    /// (jsimd_idct_4x4, jsimd_idct_2x2) and the DC alone; its 3x3, 5x5, 6x6 and 7x7 are C
    /// (jidctint.c). The general decode scales to the nearest of all eight.
    @Test("the planes are decoded at the smallest of the 1/8, 1/4, 1/2 and 1 DCT scales that covers the resize")
    func decodeScales() {
        // img2dataset's center_crop of a 1024x768 photo to 256: 3/8 (384x288) would cover it.
        #expect(JPEGPlanarResize.decodedSize(width: 1024, height: 768, target: (341, 256)) == (512, 384))
        // 5/8, 6/8 and 7/8 would: the whole image.
        #expect(JPEGPlanarResize.decodedSize(width: 1024, height: 768, target: (700, 525)) == (1024, 768))
        #expect(JPEGPlanarResize.decodedSize(width: 2048, height: 1365, target: (512, 341)) == (512, 342))
        #expect(JPEGPlanarResize.decodedSize(width: 2048, height: 1365, target: (250, 167)) == (256, 171))
        // Rounded up, as libjpeg sizes a scaled image: 1/8 of 1001x751 is 126x94, one column short of 127.
        #expect(JPEGPlanarResize.decodedSize(width: 1001, height: 751, target: (126, 94)) == (126, 94))
        #expect(JPEGPlanarResize.decodedSize(width: 1001, height: 751, target: (127, 94)) == (251, 188))
    }

    @Test("the planes as a WebP: the general path's WebP of the same decode to within rounding, in WebP's studio range")
    func webP() throws {
        let resizes = [
            JPEGPlanarResize(width: 341, height: 256, window: ResizeWindow(x: 42, y: 0, width: 256, height: 256), filter: .bilinear),
            JPEGPlanarResize(width: 203, height: 151, window: ResizeWindow(x: 7, y: 3, width: 101, height: 85), filter: .bilinear),
        ]
        // Measured: luma 1.05 to 1.71, chroma 0.72 to 2.63 (libwebp's lossy encode decides
        // differently on slightly different input; the RGBA path also converts each pixel to RGB
        // and back, clipping, and libwebp averages its 2x2 chroma from RGB). With the planes
        // given to libwebp in JPEG's full range: luma 5.47 to 8.60, chroma 2.18 to 4.93.
        for resize in resizes {
            for smooth in [true, false] {
                let source = try Self.jpeg(Self.photo(width: 640, height: 480, smooth: smooth))
                let planes = try #require(try resize.decode(source, limits: DecodeLimits()))
                let ours = try WebPCoder.encode(WebPCoder.YUVPlanes(resize.resampled(planes)), options: EncodeOptions(quality: 0.9))
                let header = try ImageHeader(data: ours)
                #expect(header.format == .webP && header.width == resize.window.columns.count && header.height == resize.window.rows.count)
                let difference = try Self.difference(ours, try Self.general(source, resize, as: .webP))
                let label = "\(resize.width)x\(resize.height), \(smooth ? "waves" : "photograph")"
                #expect(difference.luma < 2.5, "\(label): luma \(difference.luma)")
                #expect(difference.chroma < 3.2, "\(label): chroma \(difference.chroma)")
            }
        }
        // A flat colour comes back as itself: the range is mapped, not stretched or squeezed (in
        // full range, red would come back 10 levels out).
        let flat = PixelBuffer(
            width: 64, height: 48, straightRGBA: [UInt8]((0..<(64 * 48)).flatMap { _ in [200, 100, 50, 255] as [UInt8] }))
        let resize = JPEGPlanarResize(width: 32, height: 24, filter: .bilinear)
        let planes = try #require(try resize.decode(try Self.jpeg(flat, quality: 1), limits: DecodeLimits()))
        let pixels = try WebPCoder().decode(
            try WebPCoder.encode(WebPCoder.YUVPlanes(resize.resampled(planes)), options: EncodeOptions(quality: 1)),
            options: DecodeOptions()
        ).pixels
        let centre = (12 * 32 + 16) * 4
        let channels = (0..<3).map { Int(pixels.bytes[centre + $0]) }
        #expect(zip(channels, [200, 100, 50]).allSatisfy { abs($0 - $1) <= 3 }, "\(channels)")
    }
}
