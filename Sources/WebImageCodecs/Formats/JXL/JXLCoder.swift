package import Foundation
import CJXL

/// JPEG XL through libjxl (Debian's 0.7): still images and animations (frame durations and the
/// repetition count, frames composed by libjxl), alpha (associated alpha divided out), any bit
/// depth reduced to 8 bits (kept at 16 with ``DecodeOptions/keepsHighBitDepth``), the orientation applied so the pixels are upright. A lossy (XYB)
/// file is decoded straight to sRGB by libjxl; a lossless one's colour profile goes through the
/// colour management every decode has; a file encoded as PQ or HLG is decoded at 16 bits and
/// tone-mapped to sRGB (``HDRRendering``), an animation's frames together, from one peak. A
/// container's ISO 21496-1 gain map (`jhgm` box, ``GainMapJXL``) is reported in the image's
/// ``ColorDescription``; the decode gives the base image. JPEG XL cannot be scaled while decoded:
/// a thumbnail is resampled from the full size.
///
/// Encoding: lossy at a Butteraugli distance from ``EncodeOptions/quality`` (cjxl's and libvips'
/// mapping: 0.9 is distance 1, cjxl's default), or lossless with ``EncodeOptions/lossless``;
/// ``EncodeOptions/jxlEffort``; alpha; animations with their frame durations and repetition
/// count; the image's colour profile embedded. 16-bit pixels are written at 16 bits, in the
/// source's primaries and transfer (PQ, HLG, BT.2020, Display P3) where it signalled them.
package struct JXLCoder: ImageCoder, HighBitDepthEncoding, AnimatedImageCoder {
    /// The most frames an animation may have. 10,000, as for AVIF.
    public static let maximumFrames = 10_000

    /// Creates the coder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .jpegXL }
    public func canEncode(to format: ImageFormat) -> Bool { format == .jpegXL }

    public func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        var source = try JXLFrameSource(data, limits: options.limits, firstFrameOnly: options.firstFrameOnly)
        source.keepsHighBitDepth = options.keepsHighBitDepth
        // A PQ or HLG animation's frames are held at 16 bits, then tone-mapped together from one
        // peak (Image.reducedToEightBits()), so that the same light comes out the same in each.
        source.tonesTogether = source.durations.count > 1 && JXLDecoder.containerColor(in: data).description?.isHDR == true
        let image = try source.image(options: options, inputSize: data.count, format: .jpegXL)
        return options.keepsHighBitDepth ? image : image.reducedToEightBits()
    }

    public func animatedImageProvider(for data: Data, format: ImageFormat, options: DecodeOptions, maximumBufferedFrames: Int)
        throws(WebImageError) -> (any AnimatedImageProvider)?
    {
        guard format == .jpegXL else { return nil }
        return AnimatedImageDecoder.ifAnimated(
            try JXLFrameSource(data, limits: options.limits, firstFrameOnly: false), maximumBufferedFrames: maximumBufferedFrames)
    }

    /// The Butteraugli distance cjxl gives a quality from 0 to 100.
    static func distance(quality: Double) -> Float {
        let percent = max(0, min(100, quality * 100))
        return Float(percent >= 30 ? 0.1 + (100 - percent) * 0.09 : 6.4 + pow(2.5, (30 - percent) / 5) / 6.25)
    }

    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        guard format == .jpegXL else { throw WebImageError(.unsupportedFormat, "JXLCoder encodes only JPEG XL") }
        let encoder = try JXLEncoder(image, options: options)
        for frame in image.frames {
            try encoder.add(frame, animated: image.isAnimated)
        }
        return try encoder.finish()
    }
}

/// One libjxl encoder, set up for an image's size, alpha, colour and animation.
private final class JXLEncoder {
    let pointer: OpaquePointer
    let settings: OpaquePointer
    let hasAlpha: Bool
    /// Whether the samples are written at 16 bits (``PixelBuffer/isHighBitDepth``).
    let highBitDepth: Bool

    init(_ image: Image, options: EncodeOptions) throws(WebImageError) {
        guard let pointer = JxlEncoderCreate(nil) else { throw WebImageError(.encodeFailed, "libjxl could not start an encoder") }
        self.pointer = pointer
        hasAlpha = image.hasAlpha || image.frames.contains { !$0.pixels.isOpaque }
        highBitDepth = image.isHighBitDepth
        guard let settings = JxlEncoderFrameSettingsCreate(pointer, nil) else {
            JxlEncoderDestroy(pointer)
            throw WebImageError(.encodeFailed, "libjxl could not make frame settings")
        }
        self.settings = settings
        var info = JxlBasicInfo()
        JxlEncoderInitBasicInfo(&info)
        info.xsize = UInt32(image.pixelWidth)
        info.ysize = UInt32(image.pixelHeight)
        info.bits_per_sample = highBitDepth ? 16 : 8
        info.num_color_channels = 3
        info.num_extra_channels = hasAlpha ? 1 : 0
        info.alpha_bits = hasAlpha ? info.bits_per_sample : 0
        // Lossless keeps the samples as given; lossy encodes in XYB.
        info.uses_original_profile = options.lossless ? 1 : 0
        if image.isAnimated {
            info.have_animation = 1
            info.animation.tps_numerator = 1000
            info.animation.tps_denominator = 1
            info.animation.num_loops = UInt32(clamping: image.loopCount)
        }
        try check(JxlEncoderSetBasicInfo(pointer, &info), "basic info")
        if let profile = image.colorProfile {
            if let problem = ColorManagement.rgbProfileProblem(profile) {
                throw WebImageError(.encodeFailed, "JPEG XL cannot carry this colour profile: \(problem)")
            }
            try check(
                profile.withUnsafeBytes { JxlEncoderSetICCProfile(pointer, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) },
                "ICC profile")
        } else {
            var encoding = JxlColorEncoding()
            JxlColorEncodingSetToSRGB(&encoding, 0)
            if highBitDepth { Self.describe(&encoding, as: image.sourceColor) }
            try check(JxlEncoderSetColorEncoding(pointer, &encoding), "colour encoding")
        }
        if options.lossless {
            try check(JxlEncoderSetFrameLossless(settings, 1), "lossless")
        } else {
            try check(JxlEncoderSetFrameDistance(settings, JXLCoder.distance(quality: options.quality)), "distance")
        }
        try check(JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, Int64(options.jxlEffort)), "effort")
    }

    deinit { JxlEncoderDestroy(pointer) }

    func add(_ frame: ImageFrame, animated: Bool) throws(WebImageError) {
        if animated {
            var header = JxlFrameHeader()
            JxlEncoderInitFrameHeader(&header)
            let milliseconds = frame.duration.components.seconds * 1000 + frame.duration.components.attoseconds / 1_000_000_000_000_000
            header.duration = UInt32(clamping: max(1, milliseconds))
            try check(JxlEncoderSetFrameHeader(settings, &header), "frame header")
        }
        let channels = hasAlpha ? 4 : 3
        var format = JxlPixelFormat(
            num_channels: UInt32(channels), data_type: highBitDepth ? JXL_TYPE_UINT16 : JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN,
            align: 0)
        let status: JxlEncoderStatus
        if highBitDepth {
            let samples = hasAlpha ? frame.pixels.samples16 : Self.rgb(frame.pixels.samples16)
            status = samples.withUnsafeBytes { JxlEncoderAddImageFrame(settings, &format, $0.baseAddress, $0.count) }
        } else {
            let samples = hasAlpha ? frame.pixels.bytes : Self.rgb(frame.pixels.bytes)
            status = samples.withUnsafeBytes { JxlEncoderAddImageFrame(settings, &format, $0.baseAddress, $0.count) }
        }
        try check(status, "frame")
    }

    /// The source's primaries and transfer (H.273 codes, as libjxl's enums are but for Display
    /// P3: 12 here, P3 with a D65 white there) in place of sRGB's, where it signalled them and
    /// libjxl has them.
    private static func describe(_ encoding: inout JxlColorEncoding, as color: ColorDescription?) {
        switch color?.primaries {
        case 9: encoding.primaries = JXL_PRIMARIES_2100
        case 12: encoding.primaries = JXL_PRIMARIES_P3
        default: break
        }
        switch color?.transfer {
        case 1, 6, 14, 15: encoding.transfer_function = JXL_TRANSFER_FUNCTION_709
        case 8: encoding.transfer_function = JXL_TRANSFER_FUNCTION_LINEAR
        case 16: encoding.transfer_function = JXL_TRANSFER_FUNCTION_PQ
        case 18: encoding.transfer_function = JXL_TRANSFER_FUNCTION_HLG
        default: break
        }
    }

    func finish() throws(WebImageError) -> Data {
        JxlEncoderCloseInput(pointer)
        var output = Data(count: 1 << 16)
        var written = 0
        var status = JXL_ENC_NEED_MORE_OUTPUT
        while status == JXL_ENC_NEED_MORE_OUTPUT {
            if written == output.count { output.count *= 2 }
            output.withUnsafeMutableBytes { buffer in
                var next: UnsafeMutablePointer<UInt8>? = buffer.bindMemory(to: UInt8.self).baseAddress! + written
                var available = buffer.count - written
                status = JxlEncoderProcessOutput(pointer, &next, &available)
                written = buffer.count - available
            }
        }
        try check(status, "output")
        return output.prefix(written)
    }

    private func check(_ status: JxlEncoderStatus, _ what: String) throws(WebImageError) {
        guard status == JXL_ENC_SUCCESS else {
            throw WebImageError(.encodeFailed, "libjxl refused the \(what) (error \(JxlEncoderGetError(pointer).rawValue))")
        }
    }

    private static func rgb<Sample>(_ rgba: [Sample]) -> [Sample] {
        [Sample](unsafeUninitializedCapacity: rgba.count / 4 * 3) { buffer, initialized in
            for pixel in 0..<rgba.count / 4 {
                buffer[pixel * 3] = rgba[pixel * 4]
                buffer[pixel * 3 + 1] = rgba[pixel * 4 + 1]
                buffer[pixel * 3 + 2] = rgba[pixel * 4 + 2]
            }
            initialized = rgba.count / 4 * 3
        }
    }
}
