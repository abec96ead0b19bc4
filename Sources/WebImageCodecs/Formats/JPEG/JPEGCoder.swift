package import Foundation
import CTurboJPEG

/// JPEG through libjpeg-turbo's TurboJPEG API: decoding to RGBA (alpha is always
/// opaque) with the EXIF orientation read (the pixels stay as stored; ``Image/orientation`` says
/// how to turn them), DCT-domain scaling for thumbnails, and encoding at a quality, with the
/// chroma subsampling asked for (4:2:0 by default), baseline or progressive.
///
/// CMYK and YCCK files (Photoshop's, with Adobe's inverted ink) are converted to RGB without a
/// colour profile, as Pillow does. What libjpeg only warns about (stray bytes between markers,
/// padding after a segment) decodes as browsers show it, the warnings in ``Image/warnings``. A
/// file that ends before its image data does is a `WebImageError.Code.decodeFailed`, not a
/// grey-filled success, unless ``DecodeOptions/acceptsTruncatedImages`` asks for what arrived.
package struct JPEGCoder: ImageCoder {
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
        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        var warnings: [String] = []
        if tjDecompressHeader3(handle, source, UInt(bytes.count), &width, &height, &subsampling, &colorspace) != 0 {
            // A warning in the header (junk before a marker) leaves it read: libjpeg goes on.
            guard Self.isWarning(handle) else { throw WebImageError(.decodeFailed, "JPEG header: \(Self.message(handle))") }
            warnings.append(Self.message(handle))
        }
        guard width > 0, height > 0 else { throw WebImageError(.decodeFailed, "JPEG header ends before the frame size") }
        // The pixel limit applies to what is allocated, the size after DCT scaling; the declared
        // size has its own, larger cap.
        try options.limits.checkDeclared(width: Int(width), height: Int(height))
        let factor = Self.scalingFactor(width: Int(width), height: Int(height), thumbnail: options.thumbnail)
        let outputWidth = Int(Self.scaled(width, factor))
        let outputHeight = Int(Self.scaled(height, factor))
        try options.limits.check(width: outputWidth, height: outputHeight, inputSize: bytes.count)
        // libjpeg cannot turn CMYK or YCCK into RGB: take CMYK (YCCK converted by libjpeg) and convert here.
        let isCMYK = colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue)
        var pixels = try PixelBuffer.zeroedBytes(width: outputWidth, height: outputHeight)
        let format = isCMYK ? TJPF_CMYK : TJPF_RGBA
        let status = pixels.withUnsafeMutableBufferPointer { buffer in
            tjDecompress2(
                handle, source, UInt(bytes.count), buffer.baseAddress, Int32(outputWidth), 0, Int32(outputHeight),
                Int32(format.rawValue), 0)
        }
        // A warning leaves a complete image (libjpeg worked around the damage), except the end
        // of the data before the end of the image: libjpeg fills the rest with grey, which is an
        // image only when truncated images are accepted.
        var isPartial = false
        if status != 0 {
            let message = Self.message(handle)
            guard Self.isWarning(handle) else { throw WebImageError(.decodeFailed, "JPEG: \(message)") }
            isPartial = message.contains("Premature end")
            if isPartial && !options.acceptsTruncatedImages { throw WebImageError(.decodeFailed, "JPEG: \(message)") }
            if !warnings.contains(message) { warnings.append(message) }
        }
        if isCMYK { Self.convertCMYKToRGBA(&pixels, inverted: JPEGSegments.hasAdobeMarker(bytes)) }
        var buffer = PixelBuffer(width: outputWidth, height: outputHeight, straightRGBA: pixels)
        if options.thumbnail?.resamples == true {
            buffer = Self.withoutRoundedUpEdge(buffer, width: Int(width), height: Int(height), factor: factor)
        }
        var image = Image(
            pixels: buffer, scale: options.scale, orientation: ExifReader.orientation(inJPEG: bytes) ?? .up, sourceFormat: .jpeg,
            hasAlpha: false)
        image.warnings = warnings
        image.isPartial = isPartial
        return image
    }

    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        guard format == .jpeg else { throw WebImageError(.unsupportedFormat, "JPEGCoder encodes only JPEG") }
        guard let handle = tjInitCompress() else { throw WebImageError(.encodeFailed, "TurboJPEG could not start") }
        defer { tjDestroy(handle) }
        // A format with no alpha keeps the image composited over black (its premultiplied
        // colour), as SDWebImage's JPEG encoding of a translucent image does.
        let pixels = image.pixels
        let bytes = pixels.isOpaque ? pixels.bytes : pixels.premultipliedRGBA()
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let quality = Int32(max(1, min(100, (options.quality * 100).rounded())))
        // A grey picture is one grey component, as libvips keeps it (imgproxy's TestColorspace:
        // B_W); a grey pixel's luma is its value (premultiplied too).
        let subsampling: TJSAMP =
            switch options.chromaSubsampling {
            case _ where image.isStoredAsGrey: TJSAMP_GRAY
            case .none: TJSAMP_444
            case .horizontal: TJSAMP_422
            case .both: TJSAMP_420
            }
        let flags = options.progressive ? TJFLAG_PROGRESSIVE : 0
        let status = bytes.withUnsafeBufferPointer { buffer in
            tjCompress2(
                handle, buffer.baseAddress, Int32(pixels.width), 0, Int32(pixels.height), Int32(TJPF_RGBA.rawValue),
                &output, &size, Int32(subsampling.rawValue), quality, flags)
        }
        defer { tjFree(output) }
        guard status == 0, let output else { throw WebImageError(.encodeFailed, "JPEG: \(Self.message(handle))") }
        return Data(bytes: output, count: Int(size))
    }

    /// The DCT-scaled pixels without the last row or column that libjpeg adds by rounding a side
    /// up: 2048x1365 at a quarter is 512x342, the last row covering a quarter of a source row,
    /// where the image scaled is 512x341.25. A thumbnail fitted from 512x342 kept that row (512x342
    /// for a 512x512 box); dropping it keeps the aspect ratio, as the proxy's plan already does.
    static func withoutRoundedUpEdge(_ pixels: PixelBuffer, width: Int, height: Int, factor: tjscalingfactor) -> PixelBuffer {
        guard factor.num != factor.denom else { return pixels }
        let scale = Double(factor.num) / Double(factor.denom)
        let exactWidth = max(1, min(pixels.width, Int((Double(width) * scale).rounded())))
        let exactHeight = max(1, min(pixels.height, Int((Double(height) * scale).rounded())))
        guard exactWidth < pixels.width || exactHeight < pixels.height else { return pixels }
        return pixels.cropped(x: 0, y: 0, width: exactWidth, height: exactHeight)
    }

    /// CMYK to RGB in place, the way Pillow and most viewers do without a colour profile:
    /// each channel is (255 - ink) scaled by (255 - black). Adobe files store ink inverted.
    static func convertCMYKToRGBA(_ pixels: inout [UInt8], inverted: Bool) {
        pixels.withUnsafeMutableBufferPointer { buffer in
            for offset in stride(from: 0, to: buffer.count, by: 4) {
                let paper = { (value: UInt8) -> Int in inverted ? Int(value) : 255 - Int(value) }
                let light = paper(buffer[offset + 3])
                for channel in 0..<3 {
                    buffer[offset + channel] = UInt8((paper(buffer[offset + channel]) * light + 127) / 255)
                }
                buffer[offset + 3] = 255
            }
        }
    }

    /// The smallest DCT scaling factor whose output is still at least the size the thumbnail
    /// needs: the fitted size when the aspect ratio is kept (a 3000x2000 photo for a 300x300
    /// box needs 300x200, so 1/8 will do), the box itself otherwise. With `simdOnly`, only the
    /// factors whose inverse DCT libjpeg-turbo has in SIMD (1/8, 1/4, 1/2 and 1); its others
    /// (3/8, 5/8, 6/8, 7/8) are plain C, and a decode at them is slower than one at the next of
    /// these above (`docs/benchmarks.md`, "The DCT steps with SIMD": the dataset benchmark's
    /// photos to YCbCr planes and back at 863 images/s at 3/8, 917 at 1/2, 679 at 5/8, 791 at
    /// 1). That suits a caller whose resampler is cheap beside the decode; the RGBA path's is not.
    static func scalingFactor(width: Int, height: Int, thumbnail: ThumbnailSize?, simdOnly: Bool = false) -> tjscalingfactor {
        let identity = tjscalingfactor(num: 1, denom: 1)
        guard let thumbnail, thumbnail.width > 0 || thumbnail.height > 0 else { return identity }
        let needed = thumbnail.neededSize(forWidth: width, height: height)
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return identity }
        var best = identity
        for index in 0..<Int(count) {
            let factor = factors[index]
            // TurboJPEG's factors are in lowest terms: the SIMD ones are 1/1, 1/2, 1/4 and 1/8.
            guard factor.num <= factor.denom, !simdOnly || factor.num == 1 && 8 % factor.denom == 0 else { continue }
            let fits = Int(scaled(Int32(width), factor)) >= needed.width && Int(scaled(Int32(height), factor)) >= needed.height
            if fits && factor.num * best.denom < best.num * factor.denom { best = factor }
        }
        return best
    }

    /// A dimension scaled by a TurboJPEG factor, as libjpeg rounds it (up).
    static func scaled(_ dimension: Int32, _ factor: tjscalingfactor) -> Int32 {
        (dimension * factor.num + factor.denom - 1) / factor.denom
    }

    private static func isWarning(_ handle: tjhandle) -> Bool {
        tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue)
    }

    /// TurboJPEG's message for the last error on `handle`.
    static func message(_ handle: tjhandle) -> String {
        tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error"
    }
}

extension JPEGCoder: ProgressiveImageCoder {
    /// Scan by scan for a progressive JPEG, rows for a baseline one.
    public func incrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        format == .jpeg ? ProgressiveJPEGDecoder(options: options) : nil
    }
}
