public import Foundation
import CTurboJPEG

/// JPEG through libjpeg-turbo's TurboJPEG API: decoding to premultiplied RGBA (alpha is always
/// opaque) with the EXIF orientation read (the pixels stay as stored; ``Image/orientation`` says
/// how to turn them), DCT-domain scaling for thumbnails, and encoding at a quality.
///
/// A file that ends before its image data does is a ``WebImageError/Code/decodeFailed``, not a
/// grey-filled success; other recoverable corruption that libjpeg works around (stray bytes
/// between markers) still decodes.
public struct JPEGCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .jpeg }

    public func canEncode(to format: ImageFormat) -> Bool { format == .jpeg }

    public func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        guard let handle = tjInitDecompress() else { throw WebImageError(.decodeFailed, "TurboJPEG could not start") }
        defer { tjDestroy(handle) }
        return try data.withTypedBytes { bytes throws(WebImageError) in try decode(bytes, handle: handle, options: options) }
    }

    private func decode(_ bytes: UnsafeRawBufferPointer, handle: tjhandle, options: DecodeOptions) throws(WebImageError) -> Image {
        let source = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, source, UInt(bytes.count), &width, &height, &subsampling, &colorspace) == 0 else {
            throw WebImageError(.decodeFailed, "JPEG header: \(Self.message(handle))")
        }
        guard width > 0, height > 0 else { throw WebImageError(.decodeFailed, "JPEG header ends before the frame size") }
        try options.limits.check(width: Int(width), height: Int(height), inputSize: bytes.count)
        let factor = Self.scalingFactor(width: Int(width), height: Int(height), thumbnail: options.thumbnail)
        let outputWidth = Int(Self.scaled(width, factor))
        let outputHeight = Int(Self.scaled(height, factor))
        var pixels = [UInt8](repeating: 0, count: outputWidth * outputHeight * 4)
        let status = pixels.withUnsafeMutableBufferPointer { buffer in
            tjDecompress2(handle, source, UInt(bytes.count), buffer.baseAddress, Int32(outputWidth), 0, Int32(outputHeight),
                          Int32(TJPF_RGBA.rawValue), 0)
        }
        if status != 0 {
            let message = Self.message(handle)
            let isWarning = tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue)
            guard isWarning, !message.contains("Premature end") else {
                throw WebImageError(.decodeFailed, "JPEG: \(message)")
            }
        }
        return Image(
            pixels: PixelBuffer(width: outputWidth, height: outputHeight, premultipliedRGBA: pixels),
            scale: options.scale, orientation: ExifReader.orientation(inJPEG: bytes) ?? .up, sourceFormat: .jpeg, hasAlpha: false
        )
    }

    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        guard format == .jpeg else { throw WebImageError(.unsupportedFormat, "JPEGCoder encodes only JPEG") }
        guard let handle = tjInitCompress() else { throw WebImageError(.encodeFailed, "TurboJPEG could not start") }
        defer { tjDestroy(handle) }
        // Premultiplied colour is the image composited over black, which is what a format with no
        // alpha can keep of it.
        let pixels = image.pixels
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let quality = Int32(max(1, min(100, (options.quality * 100).rounded())))
        let status = pixels.bytes.withUnsafeBufferPointer { buffer in
            tjCompress2(handle, buffer.baseAddress, Int32(pixels.width), 0, Int32(pixels.height), Int32(TJPF_RGBA.rawValue),
                        &output, &size, Int32(TJSAMP_420.rawValue), quality, 0)
        }
        defer { tjFree(output) }
        guard status == 0, let output else { throw WebImageError(.encodeFailed, "JPEG: \(Self.message(handle))") }
        return Data(bytes: output, count: Int(size))
    }

    /// The smallest DCT scaling factor whose output is still at least the thumbnail size.
    private static func scalingFactor(width: Int, height: Int, thumbnail: CacheKey.Thumbnail?) -> tjscalingfactor {
        let identity = tjscalingfactor(num: 1, denom: 1)
        guard let thumbnail, thumbnail.width > 0 || thumbnail.height > 0 else { return identity }
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return identity }
        var best = identity
        for index in 0..<Int(count) {
            let factor = factors[index]
            guard factor.num <= factor.denom else { continue }
            let fits = Int(scaled(Int32(width), factor)) >= thumbnail.width && Int(scaled(Int32(height), factor)) >= thumbnail.height
            if fits && factor.num * best.denom < best.num * factor.denom { best = factor }
        }
        return best
    }

    private static func scaled(_ dimension: Int32, _ factor: tjscalingfactor) -> Int32 {
        (dimension * factor.num + factor.denom - 1) / factor.denom
    }

    private static func message(_ handle: tjhandle) -> String {
        tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error"
    }
}
