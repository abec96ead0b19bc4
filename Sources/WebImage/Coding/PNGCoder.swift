public import Foundation
import CPNG

/// PNG through libpng's simplified API: every colour type and bit depth decoded to 8-bit
/// premultiplied RGBA (16-bit samples are reduced to 8), transparency from an alpha channel or
/// tRNS kept, and encoding from straight RGBA (RGB when the image is opaque).
public struct PNGCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .png }

    public func canEncode(to format: ImageFormat) -> Bool { format == .png }

    public func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        try data.withTypedBytes { bytes throws(WebImageError) in try decode(bytes, options: options) }
    }

    private func decode(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions) throws(WebImageError) -> Image {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        defer { png_image_free(&image) }
        guard png_image_begin_read_from_memory(&image, bytes.baseAddress, bytes.count) != 0 else {
            throw WebImageError(.decodeFailed, "PNG: \(Self.message(image))")
        }
        try options.limits.check(width: Int(image.width), height: Int(image.height), inputSize: bytes.count)
        let hasAlpha = image.format & UInt32(PNG_FORMAT_FLAG_ALPHA) != 0
        image.format = UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)
        let width = Int(image.width)
        let height = Int(image.height)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let status = pixels.withUnsafeMutableBytes { buffer in
            png_image_finish_read(&image, nil, buffer.baseAddress, 0, nil)
        }
        guard status != 0 else { throw WebImageError(.decodeFailed, "PNG: \(Self.message(image))") }
        return Image(
            pixels: PixelBuffer(width: width, height: height, straightRGBA: pixels),
            scale: options.scale, sourceFormat: .png, hasAlpha: hasAlpha
        )
    }

    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        guard format == .png else { throw WebImageError(.unsupportedFormat, "PNGCoder encodes only PNG") }
        let pixels = image.pixels
        let opaque = pixels.isOpaque
        var source = pixels.straightRGBA()
        if opaque { source = Self.droppingAlpha(source) }
        var png = png_image()
        png.version = UInt32(PNG_IMAGE_VERSION)
        png.width = UInt32(pixels.width)
        png.height = UInt32(pixels.height)
        png.format = UInt32(opaque ? PNG_FORMAT_FLAG_COLOR : PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)
        defer { png_image_free(&png) }
        var size = 0
        guard png_image_write_to_memory(&png, nil, &size, 0, source, 0, nil) != 0 else {
            throw WebImageError(.encodeFailed, "PNG: \(Self.message(png))")
        }
        var output = Data(count: size)
        let status = output.withUnsafeMutableBytes { buffer in
            png_image_write_to_memory(&png, buffer.baseAddress, &size, 0, source, 0, nil)
        }
        guard status != 0 else { throw WebImageError(.encodeFailed, "PNG: \(Self.message(png))") }
        return output.prefix(size)
    }

    private static func droppingAlpha(_ rgba: [UInt8]) -> [UInt8] {
        var rgb = [UInt8]()
        rgb.reserveCapacity(rgba.count / 4 * 3)
        for index in stride(from: 0, to: rgba.count, by: 4) {
            rgb.append(rgba[index])
            rgb.append(rgba[index + 1])
            rgb.append(rgba[index + 2])
        }
        return rgb
    }

    private static func message(_ image: png_image) -> String {
        withUnsafeBytes(of: image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
