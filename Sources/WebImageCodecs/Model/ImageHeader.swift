public import Foundation
import CWebImageCodecs
import CWebP

/// The facts an image states about itself before any pixel is decoded.
///
/// Reading the header is cheap and allocates nothing for the pixels, so decode limits are checked
/// against it before a decoder commits memory. JPEG and PNG headers are read through the C shim
/// (classic libjpeg and libpng, protected against their `longjmp` error handling), GIF from its
/// logical screen descriptor, WebP with `WebPGetInfo`.
public struct ImageHeader: Sendable, Equatable {
    /// The sniffed format.
    public let format: ImageFormat
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// A progressive JPEG, or an Adam7-interlaced PNG: one that can show a coarse image early.
    public let isProgressive: Bool
    /// How to turn the stored pixels upright: a JPEG's, PNG's or WebP's EXIF orientation, ``ExifOrientation/up``
    /// for the other formats. ``width`` and ``height`` are the stored size.
    public var orientation: ExifOrientation = .up

    /// The number of pixels, `width × height`.
    public var pixelCount: Int { width * height }

    /// Reads the header of `data`.
    ///
    /// - Throws: `WebImageError.Code.notAnImage` when no image signature matches,
    ///   `WebImageError.Code.unsupportedFormat` for a recognised format with no header reader,
    ///   and `WebImageError.Code.decodeFailed` for a corrupt or truncated header.
    public init(data: some ContiguousBytes) throws(WebImageError) {
        let result: Result<ImageHeader, WebImageError> = data.withUnsafeBytes { bytes in
            guard let format = ImageFormat(sniffing: bytes) else {
                return .failure(WebImageError(.notAnImage, "no image signature in \(bytes.count) bytes"))
            }
            return Result { () throws(WebImageError) in try ImageHeader.read(format, bytes) }
        }
        self = try result.get()
    }

    package init(format: ImageFormat, width: Int, height: Int, isProgressive: Bool = false) {
        self.format = format
        self.width = width
        self.height = height
        self.isProgressive = isProgressive
    }

    private static func read(_ format: ImageFormat, _ bytes: UnsafeRawBufferPointer) throws(WebImageError) -> ImageHeader {
        switch format {
        case .jpeg:
            var header = try probe(format, bytes, cwi_jpeg_read_header)
            header.orientation = ExifReader.orientation(inJPEG: bytes) ?? .up
            return header
        case .png:
            var header = try probe(format, bytes, cwi_png_read_header)
            header.orientation = SourceMetadata(container: bytes, format: .png).orientation ?? .up
            return header
        case .gif:
            guard bytes.count >= 10 else { throw WebImageError(.decodeFailed, "GIF header truncated") }
            let width = Int(bytes[6]) | Int(bytes[7]) << 8
            let height = Int(bytes[8]) | Int(bytes[9]) << 8
            return ImageHeader(format: format, width: width, height: height)
        case .webP:
            var width: Int32 = 0
            var height: Int32 = 0
            let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard WebPGetInfo(base, bytes.count, &width, &height) != 0 else {
                throw WebImageError(.decodeFailed, "WebP header unreadable")
            }
            var header = ImageHeader(format: format, width: Int(width), height: Int(height))
            header.orientation = SourceMetadata(container: bytes, format: .webP).orientation ?? .up
            return header
        case .bmp:
            guard bytes.count >= 14 else { throw WebImageError(.decodeFailed, "BMP header truncated") }
            let dib = try DIB(UnsafeRawBufferPointer(rebasing: bytes[14...]), pixelOffset: 0, hasMask: false)
            return ImageHeader(format: format, width: dib.width, height: dib.height)
        case .ico:
            let largest = try ICOFile(bytes).entry(for: nil)
            return ImageHeader(format: format, width: largest.width, height: largest.height)
        case .tiff:
            var info = cwi_tiff_info()
            guard cwi_tiff_read_info(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, 0, &info) == 0 else {
                throw WebImageError(.decodeFailed, "TIFF header unreadable")
            }
            var header = ImageHeader(format: format, width: Int(info.width), height: Int(info.height))
            header.orientation = ExifOrientation(rawValue: Int(info.orientation)) ?? .up
            return header
        case .heic, .heif:
            let size = try HEIFContext(bytes.bindMemory(to: UInt8.self)).primarySize()
            return ImageHeader(format: format, width: size.width, height: size.height)
        case .svg:
            // The document's own size, within the largest a header can state (its pixel count
            // must not overflow): a vector is drawn smaller to fit the limits anyway.
            let size = SVGCoder.fitted(SVGCoder.renderedSize(of: try SVGDocument(Data(bytes)).size, thumbnail: nil), within: 1 << 52)
            return ImageHeader(format: format, width: size.width, height: size.height)
        case .jpegXL:
            let size = try JXLDecoder(Data(bytes)).uprightSize
            return ImageHeader(format: format, width: size.width, height: size.height)
        case .avif:
            // libavif parses the container only (no AV1 decoding); the size is the upright one,
            // as decoding turns the pixels by the irot transform.
            let decoder = try AVIFFrameSource.Decoder(Data(bytes), limits: DecodeLimits())
            let (width, height) = (Int(decoder.image.width), Int(decoder.image.height))
            return decoder.swapsDimensions
                ? ImageHeader(format: format, width: height, height: width) : ImageHeader(format: format, width: width, height: height)
        default:
            throw WebImageError(.unsupportedFormat, "no header reader for \(format.rawValue)")
        }
    }

    private static func probe(
        _ format: ImageFormat,
        _ bytes: UnsafeRawBufferPointer,
        _ reader: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<cwi_header_info>?) -> Int32
    ) throws(WebImageError) -> ImageHeader {
        var info = cwi_header_info()
        let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        guard reader(base, bytes.count, &info) == 0 else {
            let reason = withUnsafeBytes(of: info.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw WebImageError(.decodeFailed, "\(format.rawValue) header: \(reason)")
        }
        return ImageHeader(format: format, width: Int(info.width), height: Int(info.height), isProgressive: info.progressive != 0)
    }
}
