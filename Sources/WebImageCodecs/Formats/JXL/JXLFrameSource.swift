import Foundation
import CJXL

/// A libjxl decoder over a copy of a JPEG XL file, stepped event by event.
final class JXLDecoder {
    let pointer: OpaquePointer
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    /// The codestream's basic information, once ``JXL_DEC_BASIC_INFO`` has passed.
    private(set) var info = JxlBasicInfo()
    /// The container's ISO 21496-1 gain map (``GainMapJXL``: libjxl 0.7 does not read it), found
    /// when a colour description is first asked for.
    private lazy var gainMap: FoundGainMap? = GainMapJXL.find(in: UnsafeRawBufferPointer(bytes))

    /// A decoder reporting `events` (basic information always).
    init(_ data: Data, events: JxlDecoderStatus = JxlDecoderStatus(0)) throws(WebImageError) {
        guard let pointer = JxlDecoderCreate(nil) else { throw WebImageError(.decodeFailed, "libjxl could not start a decoder") }
        self.pointer = pointer
        bytes = .allocate(capacity: max(1, data.count))
        _ = bytes.initialize(from: data)
        guard JxlDecoderSubscribeEvents(pointer, Int32(JXL_DEC_BASIC_INFO.rawValue | events.rawValue)) == JXL_DEC_SUCCESS,
            JxlDecoderSetUnpremultiplyAlpha(pointer, 1) == JXL_DEC_SUCCESS
        else { throw WebImageError(.decodeFailed, "libjxl refused the decoder's settings") }
        try start(count: data.count)
        guard try next() == JXL_DEC_BASIC_INFO else { throw WebImageError(.decodeFailed, "JPEG XL: no image header") }
    }

    deinit {
        JxlDecoderDestroy(pointer)
        bytes.deallocate()
    }

    /// Back to the start of the file; the events subscribed stay.
    func rewind() throws(WebImageError) {
        JxlDecoderRewind(pointer)
        try start(count: bytes.count)
    }

    private func start(count: Int) throws(WebImageError) {
        guard JxlDecoderSetInput(pointer, bytes.baseAddress, count) == JXL_DEC_SUCCESS else {
            throw WebImageError(.decodeFailed, "libjxl refused the input")
        }
        JxlDecoderCloseInput(pointer)
    }

    /// The next event; errors and a file that ends early are thrown.
    func next() throws(WebImageError) -> JxlDecoderStatus {
        let status = JxlDecoderProcessInput(pointer)
        switch status {
        case JXL_DEC_ERROR: throw WebImageError(.decodeFailed, "JPEG XL: the file is malformed")
        case JXL_DEC_NEED_MORE_INPUT: throw WebImageError(.decodeFailed, "JPEG XL: the file is truncated")
        case JXL_DEC_BASIC_INFO:
            guard JxlDecoderGetBasicInfo(pointer, &info) == JXL_DEC_SUCCESS else {
                throw WebImageError(.decodeFailed, "JPEG XL: unreadable image header")
            }
        default: break
        }
        return status
    }

    /// The displayed size: orientations 5 to 8 exchange width and height.
    var uprightSize: (width: Int, height: Int) {
        info.orientation.rawValue >= JXL_ORIENT_TRANSPOSE.rawValue
            ? (Int(info.ysize), Int(info.xsize)) : (Int(info.xsize), Int(info.ysize))
    }

    /// At ``JXL_DEC_COLOR_ENCODING``: a lossy (XYB) file is asked for sRGB, which libjxl converts
    /// to exactly; any other keeps its own colour space, and so does a PQ or HLG one (libjxl 0.7
    /// would clip it to sRGB: its samples are tone-mapped here instead, ``hdrDescription()``).
    func preferSRGB() {
        guard info.uses_original_profile == 0, !colorDescription().isHDR else { return }
        var srgb = JxlColorEncoding()
        JxlColorEncodingSetToSRGB(&srgb, info.num_color_channels == 1 ? 1 : 0)
        _ = JxlDecoderSetPreferredColorProfile(pointer, &srgb)
    }

    /// At ``JXL_DEC_COLOR_ENCODING``: the ICC profile of the pixels decoded, nil when they are sRGB.
    func dataProfile() -> Data? {
        guard info.uses_original_profile != 0 else { return nil }
        var encoding = JxlColorEncoding()
        if JxlDecoderGetColorAsEncodedProfile(pointer, nil, JXL_COLOR_PROFILE_TARGET_DATA, &encoding) == JXL_DEC_SUCCESS,
            encoding.white_point == JXL_WHITE_POINT_D65, encoding.transfer_function == JXL_TRANSFER_FUNCTION_SRGB,
            encoding.color_space == JXL_COLOR_SPACE_GRAY || encoding.primaries == JXL_PRIMARIES_SRGB
        {
            return nil
        }
        var size = 0
        guard JxlDecoderGetICCProfileSize(pointer, nil, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS, size > 0 else {
            return nil
        }
        var profile = Data(count: size)
        let status = profile.withUnsafeMutableBytes {
            JxlDecoderGetColorAsICCProfile(pointer, nil, JXL_COLOR_PROFILE_TARGET_DATA, $0.bindMemory(to: UInt8.self).baseAddress, size)
        }
        return status == JXL_DEC_SUCCESS ? profile : nil
    }

    /// At ``JXL_DEC_COLOR_ENCODING``: the bits per sample and the encoded colour space (H.273
    /// codes: libjxl's enums are H.273's, but for P3 with a D65 white, which is H.273's 12); no
    /// primaries or transfer for a file described by an ICC profile only; the gain map.
    func colorDescription() -> ColorDescription {
        var description = ColorDescription(bitDepth: Int(info.bits_per_sample)).noting(gainMap)
        var encoding = JxlColorEncoding()
        guard JxlDecoderGetColorAsEncodedProfile(pointer, nil, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &encoding) == JXL_DEC_SUCCESS
        else { return description }
        if encoding.transfer_function != JXL_TRANSFER_FUNCTION_GAMMA, encoding.transfer_function != JXL_TRANSFER_FUNCTION_UNKNOWN {
            description.transfer = Int(encoding.transfer_function.rawValue)
        }
        if encoding.color_space == JXL_COLOR_SPACE_RGB, encoding.primaries != JXL_PRIMARIES_CUSTOM {
            let displayP3 = encoding.primaries == JXL_PRIMARIES_P3 && encoding.white_point == JXL_WHITE_POINT_D65
            description.primaries = displayP3 ? 12 : Int(encoding.primaries.rawValue)
        }
        return description
    }

    /// At ``JXL_DEC_COLOR_ENCODING``, after ``preferSRGB()``: the file's description when the
    /// pixels libjxl decodes are PQ or HLG coded (a file so encoded, lossless or lossy), which
    /// are then tone-mapped to sRGB; nil otherwise.
    func hdrDescription() -> ColorDescription? {
        let description = colorDescription()
        var data = JxlColorEncoding()
        guard description.isHDR,
            JxlDecoderGetColorAsEncodedProfile(pointer, nil, JXL_COLOR_PROFILE_TARGET_DATA, &data) == JXL_DEC_SUCCESS,
            data.transfer_function == JXL_TRANSFER_FUNCTION_PQ || data.transfer_function == JXL_TRANSFER_FUNCTION_HLG
        else { return nil }
        return description
    }

    /// The colour profile of the pixels a decode gives (nil for sRGB, and for PQ or HLG pixels,
    /// which the decode tone-maps to sRGB) and the file's colour description, read from the
    /// header alone, by one decoder.
    static func containerColor(in data: Data) -> (profile: Data?, description: ColorDescription?) {
        guard let decoder = try? JXLDecoder(data, events: JXL_DEC_COLOR_ENCODING), (try? decoder.next()) == JXL_DEC_COLOR_ENCODING
        else { return (nil, nil) }
        decoder.preferSRGB()
        return (decoder.hdrDescription() == nil ? decoder.dataProfile() : nil, decoder.colorDescription())
    }
}

/// A JPEG XL's frames for ``AnimatedImageDecoder`` and whole decodes: composed by libjxl, as
/// 8-bit RGBA (PQ and HLG frames tone-mapped from 16 bits), or 16-bit when held so, upright.
struct JXLFrameSource: AnimationFrameSource {
    private let decoder: JXLDecoder
    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int
    let durations: [Duration]
    /// Set at the colour encoding when the frames are PQ or HLG coded: they are decoded at 16
    /// bits and tone-mapped, unless kept.
    private(set) var sourceColor: ColorDescription?
    /// Frames of more than 8 bits a sample come as 16-bit pixels, not reduced or tone-mapped
    /// (``DecodeOptions/keepsHighBitDepth``).
    var keepsHighBitDepth = false
    /// Set for a PQ or HLG file: its frames come as 16-bit pixels, to be tone-mapped together by
    /// the caller.
    var tonesTogether = false
    private let limits: DecodeLimits

    init(_ data: Data, limits: DecodeLimits, firstFrameOnly: Bool) throws(WebImageError) {
        decoder = try JXLDecoder(data, events: JxlDecoderStatus(JXL_DEC_COLOR_ENCODING.rawValue | JXL_DEC_FULL_IMAGE.rawValue))
        (canvasWidth, canvasHeight) = decoder.uprightSize
        self.limits = limits
        try limits.checkDeclared(width: canvasWidth, height: canvasHeight)
        try limits.check(width: canvasWidth, height: canvasHeight, inputSize: data.count)
        let info = decoder.info
        loopCount = Int(info.animation.num_loops)
        durations = info.have_animation != 0 && !firstFrameOnly ? try Self.durations(data, animation: info.animation) : [.zero]
    }

    /// Every shown frame's duration, from the frame headers (libjxl skips the pixels).
    private static func durations(_ data: Data, animation: JxlAnimationHeader) throws(WebImageError) -> [Duration] {
        let headers = try JXLDecoder(data, events: JXL_DEC_FRAME)
        var durations: [Duration] = []
        while try headers.next() != JXL_DEC_SUCCESS {
            var header = JxlFrameHeader()
            guard JxlDecoderGetFrameHeader(headers.pointer, &header) == JXL_DEC_SUCCESS else { continue }
            guard durations.count < JXLCoder.maximumFrames else {
                throw WebImageError(.tooLarge, "JPEG XL: more than \(JXLCoder.maximumFrames) frames")
            }
            let milliseconds = Double(header.duration) * 1000 * Double(animation.tps_denominator) / Double(max(1, animation.tps_numerator))
            // As for GIF, WebP and AVIF: under 11 ms shows as 100 ms.
            durations.append(milliseconds < 11 ? .milliseconds(100) : .milliseconds(Int(milliseconds.rounded())))
        }
        return durations.isEmpty ? [.zero] : durations
    }

    var holdsHighBitDepth: Bool { keepsHighBitDepth && decoder.info.bits_per_sample > 8 || tonesTogether }

    mutating func rewind() throws(WebImageError) {
        try decoder.rewind()
    }

    mutating func next() throws(WebImageError) -> PixelBuffer {
        while true {
            switch try decoder.next() {
            case JXL_DEC_COLOR_ENCODING:
                decoder.preferSRGB()
                sourceColor = decoder.hdrDescription()
                keepsHighBitDepth = keepsHighBitDepth && decoder.info.bits_per_sample > 8
                if keepsHighBitDepth {
                    try limits.checkHighBitDepth(width: canvasWidth, height: canvasHeight)
                } else if sourceColor != nil {
                    try HDRRendering.checkWorkingMemory(width: canvasWidth, height: canvasHeight, limits: limits)
                }
            case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                guard keepsHighBitDepth || sourceColor != nil else {
                    return PixelBuffer(width: canvasWidth, height: canvasHeight, straightRGBA: try decodeFrame(JXL_TYPE_UINT8))
                }
                let wide = PixelBuffer(width: canvasWidth, height: canvasHeight, straightRGBA16: try decodeFrame(JXL_TYPE_UINT16))
                return keepsHighBitDepth || tonesTogether ? wide : wide.reducedToEightBits(describedBy: sourceColor)
            case JXL_DEC_SUCCESS:
                throw WebImageError(.decodeFailed, "JPEG XL: no more frames")
            default:
                continue
            }
        }
    }

    /// At ``JXL_DEC_NEED_IMAGE_OUT_BUFFER``: the frame decoded straight into the array that
    /// becomes the pixels. Every libjxl call that writes to the array is made inside its
    /// initializer, where its storage is ours to lend. (Decoding into a buffer of its own and
    /// copying out was 0.71x of djxl; this is 0.76x, at the floor of libjxl alone: docs/benchmarks.md.)
    /// `Sample` is `type`'s: UInt8 for `JXL_TYPE_UINT8`, UInt16 for `JXL_TYPE_UINT16`.
    private func decodeFrame<Sample: FixedWidthInteger>(_ type: JxlDataType) throws(WebImageError) -> [Sample] {
        var format = JxlPixelFormat(num_channels: 4, data_type: type, endianness: JXL_NATIVE_ENDIAN, align: 0)
        var size = 0
        let count = canvasWidth * canvasHeight * 4
        guard JxlDecoderImageOutBufferSize(decoder.pointer, &format, &size) == JXL_DEC_SUCCESS, size == count * MemoryLayout<Sample>.size
        else { throw WebImageError(.decodeFailed, "JPEG XL: unexpected frame size") }
        _ = try PixelBuffer.byteCount(width: canvasWidth, height: canvasHeight)
        var failure: WebImageError?
        let pixels = [Sample](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = count
            guard JxlDecoderSetImageOutBuffer(decoder.pointer, &format, buffer.baseAddress, size) == JXL_DEC_SUCCESS else {
                failure = WebImageError(.decodeFailed, "libjxl refused the output buffer")
                return
            }
            do throws(WebImageError) {
                while try decoder.next() != JXL_DEC_FULL_IMAGE {}
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return pixels
    }
}
