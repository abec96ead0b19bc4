package import Foundation
import CWebImageCodecs

/// TIFF through libtiff's RGBA interface (in the C shim, on memory buffers, silent): strips and
/// tiles, 1- to 16-bit samples (reduced to 8), palette, grey, CMYK and YCbCr, every compression
/// Debian's libtiff is built with (none, LZW, deflate, PackBits, JPEG, ...), alpha (associated or
/// not). What that interface refuses or spoils, the shim reads sample by sample from libtiff's
/// decoded strips and tiles: 12-bit and other odd depths and 16-bit CMYK (scaled from the full
/// range of their depth), 32-bit integer and 32/64-bit float samples (no full range: read on the
/// 0-255 scale, clipped and truncated, as libvips and Pillow render them), and every page with
/// unassociated alpha (kept straight, not premultiplied in 8 bits). The Orientation tag is kept as ``Image/orientation`` with the rows as stored, as a JPEG's
/// EXIF orientation is. Pages of a multi-page file that share the first page's size become frames
/// (without durations); others are left out with a warning, as are pages past the first
/// ``maximumPages`` (each page is found by walking the file's directory chain from the start).
///
/// Encoding: 8-bit RGB, or RGBA with unassociated alpha, deflate with the horizontal predictor;
/// each frame a page; 16-bit pixels as 16-bit samples.
///
/// With ``DecodeOptions/keepsHighBitDepth`` the pages of a file of unsigned samples of 9 to 16
/// bits (alpha not associated) are read by the sample reader at 16 bits a sample, scaled from
/// their depth's full range, when every page read has such samples (else all are 8-bit: the
/// frames share one depth); each is charged twice its pixels.
package struct TIFFCoder: ImageCoder, HighBitDepthEncoding {
    /// The most pages read from one file. 1,000.
    public static let maximumPages = 1_000

    /// Creates the coder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .tiff }
    public func canEncode(to format: ImageFormat) -> Bool { format == .tiff }

    public func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        try data.withTypedBytes { bytes throws(WebImageError) -> Image in
            let base = bytes.baseAddress
            var info = cwi_tiff_info()
            guard cwi_tiff_read_info(base, bytes.count, 0, &info) == 0 else { throw Self.failure(info) }
            let width = Int(info.width)
            let height = Int(info.height)
            try options.limits.checkDeclared(width: width, height: height)
            try options.limits.check(width: width, height: height, inputSize: bytes.count)
            let orientation = ExifOrientation(rawValue: Int(info.orientation)) ?? .up
            var frames: [ImageFrame] = []
            var warnings: [String] = []
            var hasAlpha = false
            let pages = options.firstFrameOnly ? 1 : min(Self.maximumPages, max(1, Int(info.pages)))
            if Int(info.pages) > pages, !options.firstFrameOnly {
                warnings.append("\(info.pages) pages: only the first \(pages) are read")
            }
            // Kept at 16 bits when every page read has more than 8 (one depth for all frames).
            let sixteen =
                options.keepsHighBitDepth && (0..<pages).allSatisfy { cwi_tiff_page_bits(base, bytes.count, UInt32($0)) > 8 }
            for page in 0..<pages {
                var pageInfo = cwi_tiff_info()
                if page > 0 {
                    guard cwi_tiff_read_info(base, bytes.count, UInt32(page), &pageInfo) == 0 else {
                        warnings.append("page \(page + 1) unreadable: \(Self.message(pageInfo))")
                        continue
                    }
                    guard pageInfo.width == info.width, pageInfo.height == info.height else {
                        warnings.append("page \(page + 1) is \(pageInfo.width)x\(pageInfo.height), not the first page's size: left out")
                        continue
                    }
                }
                // Every kept page is allocated: together they must fit the pixel budget (16-bit
                // pages charged twice).
                if sixteen {
                    try options.limits.checkHighBitDepth(width: width, height: height * (frames.count + 1))
                } else if page > 0 {
                    try options.limits.check(width: width, height: height * (frames.count + 1), inputSize: bytes.count)
                }
                guard let pixels = try Self.page(page, of: bytes, info: info, sixteen: sixteen, pageInfo: &pageInfo) else {
                    if page == 0 { throw Self.failure(pageInfo) }
                    warnings.append("page \(page + 1) unreadable: \(Self.message(pageInfo))")
                    continue
                }
                hasAlpha = hasAlpha || pageInfo.has_alpha != 0
                frames.append(ImageFrame(pixels: pixels))
            }
            var image = Image(frames: frames, scale: options.scale, orientation: orientation, sourceFormat: .tiff, hasAlpha: hasAlpha)
            image.warnings = warnings
            return image
        }
    }

    /// One page's straight RGBA: at 16 bits a sample (its depth's full range), or 8; nil when
    /// libtiff cannot read it (`pageInfo` says why).
    private static func page(
        _ page: Int, of bytes: UnsafeRawBufferPointer, info: cwi_tiff_info, sixteen: Bool, pageInfo: inout cwi_tiff_info
    ) throws(WebImageError) -> PixelBuffer? {
        let (width, height) = (Int(info.width), Int(info.height))
        var status: Int32 = -1
        if sixteen {
            let samples = [UInt16](unsafeUninitializedCapacity: try PixelBuffer.byteCount(width: width, height: height)) {
                buffer, initialized in
                buffer.initialize(repeating: 0)
                initialized = buffer.count
                status = cwi_tiff_decode_page16(
                    bytes.baseAddress, bytes.count, UInt32(page), buffer.baseAddress, info.width, info.height, &pageInfo)
            }
            return status == 0 ? PixelBuffer(width: width, height: height, straightRGBA16: samples) : nil
        }
        let pixels = [UInt8](unsafeUninitializedCapacity: try PixelBuffer.byteCount(width: width, height: height)) { buffer, initialized in
            buffer.initialize(repeating: 0)
            initialized = buffer.count
            status = buffer.withMemoryRebound(to: UInt32.self) { raster in
                cwi_tiff_decode_page(bytes.baseAddress, bytes.count, UInt32(page), raster.baseAddress, info.width, info.height, &pageInfo)
            }
        }
        guard status == 0 else { return nil }
        // libtiff's RGBA interface premultiplies alpha; pages read as stored are straight.
        return pageInfo.has_alpha != 0 && pageInfo.straight == 0
            ? PixelBuffer(width: width, height: height, premultipliedRGBA: pixels)
            : PixelBuffer(width: width, height: height, straightRGBA: pixels)
    }

    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        guard format == .tiff else { throw WebImageError(.unsupportedFormat, "TIFFCoder encodes only TIFF") }
        let frames = image.frames.filter { $0.pixels.width == image.pixelWidth && $0.pixels.height == image.pixelHeight }
        let alpha = frames.contains { !$0.pixels.isOpaque }
        var sink = cwi_tiff_sink()
        defer { cwi_tiff_free(&sink) }
        let profile = [UInt8](image.colorProfile ?? Data())
        // Every page at one depth: 16 bits when every frame's pixels are, else all reduced to 8
        // (pages of both depths would be read with one stride).
        let image = image.frames.allSatisfy { $0.pixels.isHighBitDepth } ? image : image.reducedToEightBits()
        let bits = image.isHighBitDepth ? 16 : 8
        let status = Self.withBaseAddresses(frames.map(\.pixels.bytes)) { pages in
            cwi_tiff_encode(
                pages, UInt32(pages.count), UInt32(image.pixelWidth), UInt32(image.pixelHeight), alpha ? 1 : 0, Int32(bits), profile,
                UInt32(profile.count), &sink)
        }
        guard status == 0, let bytes = sink.data else { throw WebImageError(.encodeFailed, "libtiff could not write the image") }
        return Data(bytes: bytes, count: sink.size)
    }

    /// Calls `body` with a pointer to each array's bytes, all valid at once.
    private static func withBaseAddresses<Result>(
        _ arrays: [[UInt8]], _ body: ([UnsafePointer<UInt8>?]) -> Result
    ) -> Result {
        func nest(_ index: Int, _ pointers: [UnsafePointer<UInt8>?]) -> Result {
            guard index < arrays.count else { return body(pointers) }
            return arrays[index].withUnsafeBufferPointer { nest(index + 1, pointers + [$0.baseAddress]) }
        }
        return nest(0, [])
    }

    private static func message(_ info: cwi_tiff_info) -> String {
        withUnsafeBytes(of: info.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// The first page's embedded ICC profile (for `SourceMetadata`).
    static func colorProfile(in data: Data) -> Data? {
        data.withUnsafeBytes { bytes -> Data? in
            var length: UInt32 = 0
            guard let profile = cwi_tiff_icc_profile(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, &length) else {
                return nil
            }
            defer { free(profile) }
            return Data(bytes: profile, count: Int(length))
        }
    }

    private static func failure(_ info: cwi_tiff_info) -> WebImageError {
        WebImageError(.decodeFailed, "TIFF: \(message(info))")
    }
}
