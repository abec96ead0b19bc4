package import Foundation
import CAVIF

/// AVIF through libavif (Debian's 0.11: dav1d decodes, aom encodes): still images and image
/// sequences (animations, with each frame's duration), alpha, 8-, 10- and 12-bit samples reduced to
/// 8 bits (kept at 16 with ``DecodeOptions/keepsHighBitDepth``; a PQ or HLG sequence's frames
/// tone-mapped together, from one peak), and the `irot`/`imir` transforms applied so the image is upright. The embedded ICC
/// profile goes through the colour management every decode has. libavif 0.11 does not expose a
/// sequence's repetition count, so animations loop forever (as browsers play most of them).
///
/// Encoding: 4:2:0 YUV at a quantizer from ``EncodeOptions/quality`` (1.0 is lossless-grade
/// quantizer 0, 0 is 63), ``EncodeOptions/avifSpeed``, alpha at the same quantizer; an animated
/// image becomes an image sequence with its frame durations; the image's colour profile is
/// embedded. 16-bit pixels are written at the source's 10 bits, or 12, with its `nclx`. AVIF cannot be scaled while decoded: a thumbnail is resampled from the full size.
package struct AVIFCoder: ImageCoder, AnimatedImageCoder, HighBitDepthEncoding {
    /// The most frames a sequence may have. 10,000.
    public static let maximumFrames = 10_000

    /// Creates the coder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .avif }
    public func canEncode(to format: ImageFormat) -> Bool { format == .avif }

    public func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        var source = try AVIFFrameSource(data, limits: options.limits)
        source.keepsHighBitDepth = options.keepsHighBitDepth
        // A PQ or HLG sequence's frames are held at 16 bits, then tone-mapped together from one
        // peak (Image.reducedToEightBits()), so that the same light comes out the same in each.
        source.tonesTogether = source.durations.count > 1
        let image = try source.image(options: options, inputSize: data.count, format: .avif)
        return options.keepsHighBitDepth ? image : image.reducedToEightBits()
    }

    public func animatedImageProvider(for data: Data, format: ImageFormat, options: DecodeOptions, maximumBufferedFrames: Int)
        throws(WebImageError) -> (any AnimatedImageProvider)?
    {
        guard format == .avif else { return nil }
        return AnimatedImageDecoder.ifAnimated(
            try AVIFFrameSource(data, limits: options.limits), maximumBufferedFrames: maximumBufferedFrames)
    }

    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        guard format == .avif else { throw WebImageError(.unsupportedFormat, "AVIFCoder encodes only AVIF") }
        guard let encoder = avifEncoderCreate() else { throw WebImageError(.encodeFailed, "libavif could not start an encoder") }
        defer { avifEncoderDestroy(encoder) }
        let quantizer = Int32((max(0, min(1, 1 - options.quality)) * 63).rounded())
        encoder.pointee.minQuantizer = quantizer
        encoder.pointee.maxQuantizer = quantizer
        encoder.pointee.minQuantizerAlpha = quantizer
        encoder.pointee.maxQuantizerAlpha = quantizer
        encoder.pointee.speed = Int32(max(0, min(10, options.avifSpeed)))
        encoder.pointee.timescale = 1000
        let opaque = !image.hasAlpha && image.frames.allSatisfy { $0.pixels.isOpaque }
        let flags = image.isAnimated ? avifAddImageFlags(0) : avifAddImageFlags(AVIF_ADD_IMAGE_FLAG_SINGLE.rawValue)
        for frame in image.frames {
            let yuv = try Self.yuvImage(frame.pixels, opaque: opaque, profile: image.colorProfile, color: image.sourceColor)
            defer { avifImageDestroy(yuv) }
            let milliseconds = UInt64(
                max(1, frame.duration.components.seconds * 1000 + frame.duration.components.attoseconds / 1_000_000_000_000_000))
            let added = avifEncoderAddImage(encoder, yuv, milliseconds, flags)
            guard added == AVIF_RESULT_OK else { throw Self.failure(added, "could not encode a frame") }
        }
        var output = avifRWData()
        defer { avifRWDataFree(&output) }
        let finished = avifEncoderFinish(encoder, &output)
        guard finished == AVIF_RESULT_OK, let bytes = output.data else { throw Self.failure(finished, "could not finish the file") }
        return Data(bytes: bytes, count: output.size)
    }

    /// `pixels` as a 4:2:0 YUV image (with an alpha plane unless `opaque`): 8-bit, or for 16-bit
    /// pixels (``PixelBuffer/isHighBitDepth``) the source's 10 or 12 bits (12 for a 16-bit
    /// source) with its `nclx` code points (``highBitDepth(_:color:)``).
    private static func yuvImage(_ pixels: PixelBuffer, opaque: Bool, profile: Data?, color: ColorDescription?) throws(WebImageError)
        -> UnsafeMutablePointer<avifImage>
    {
        let depth = pixels.isHighBitDepth ? (color?.bitDepth == 10 ? 10 : 12) : 8
        guard let yuv = avifImageCreate(UInt32(pixels.width), UInt32(pixels.height), UInt32(depth), AVIF_PIXEL_FORMAT_YUV420) else {
            throw WebImageError(.encodeFailed, "libavif could not make a \(pixels.width)x\(pixels.height) image")
        }
        if let profile {
            profile.withUnsafeBytes { avifImageSetProfileICC(yuv, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count) }
        }
        if pixels.isHighBitDepth { highBitDepth(yuv, color: color) }
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, yuv)
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.depth = UInt32(pixels.bitsPerSample)
        rgb.ignoreAlpha = opaque ? 1 : 0
        rgb.rowBytes = UInt32(pixels.bytesPerRow)
        let converted = pixels.bytes.withUnsafeBufferPointer { bytes in
            rgb.pixels = UnsafeMutablePointer(mutating: bytes.baseAddress)
            return avifImageRGBToYUV(yuv, &rgb)
        }
        guard converted == AVIF_RESULT_OK else {
            avifImageDestroy(yuv)
            throw failure(converted, "could not convert the pixels to YUV")
        }
        return yuv
    }

    /// The `nclx` of a high-bit-depth result: the source's primaries and transfer (2,
    /// "unspecified", where it signalled none), and its matrix when 4:2:0 can carry it (BT.709,
    /// BT.601 or BT.2020's non-constant luminance), else BT.601, libavif's default.
    private static func highBitDepth(_ yuv: UnsafeMutablePointer<avifImage>, color: ColorDescription?) {
        yuv.pointee.colorPrimaries = UInt16(clamping: color?.primaries ?? 2)
        yuv.pointee.transferCharacteristics = UInt16(clamping: color?.transfer ?? 2)
        let matrix = color?.matrix ?? 6
        yuv.pointee.matrixCoefficients = UInt16([1, 5, 6, 9].contains(matrix) ? matrix : 6)
    }

    static func failure(_ result: avifResult, _ what: String) -> WebImageError {
        WebImageError(.encodeFailed, "libavif \(what): \(String(cString: avifResultToString(result)))")
    }
}

/// An AVIF's frames for ``AnimatedImageDecoder`` and whole decodes: libavif's decoder over a copy
/// of the file, frames converted to 8-bit RGBA (or held at 16 bits) and turned upright.
struct AVIFFrameSource: AnimationFrameSource {
    /// Owns the copy of the file and the libavif decoder reading it.
    final class Decoder {
        let bytes: UnsafeMutableBufferPointer<UInt8>
        let pointer: UnsafeMutablePointer<avifDecoder>
        let count: Int
        /// The file's ISO 21496-1 gain map (``GainMapHEIF``: libavif 0.11 does not read it), read
        /// when a description is first asked for (the metadata reader's decoder wants only the
        /// profile).
        private(set) lazy var gainMap: FoundGainMap? = GainMapHEIF.find(
            in: UnsafeRawBufferPointer(start: bytes.baseAddress, count: count))

        init(_ data: Data, limits: DecodeLimits) throws(WebImageError) {
            guard let pointer = avifDecoderCreate() else { throw WebImageError(.decodeFailed, "libavif could not start a decoder") }
            self.pointer = pointer
            bytes = .allocate(capacity: max(1, data.count))
            _ = bytes.initialize(from: data)
            count = data.count
            pointer.pointee.maxThreads = 1
            pointer.pointee.ignoreXMP = 1
            // Files that browsers and Pillow decode: without the `pixi` property (libheif up to
            // 1.11 left it out; it only restates the AV1 stream's bit depth) or with a clean
            // aperture libavif would call invalid (not applied here, so nothing depends on it).
            pointer.pointee.strictFlags &= ~(AVIF_STRICT_PIXI_REQUIRED.rawValue | AVIF_STRICT_CLAP_VALID.rawValue)
            // A sequence longer than this is refused at parse (libavif's default is 12 hours at
            // 60 fps): every frame of a whole decode is decoded, however small.
            pointer.pointee.imageCountLimit = UInt32(AVIFCoder.maximumFrames)
            // libavif refuses larger images itself before allocating; ours are checked below too.
            pointer.pointee.imageSizeLimit = UInt32(clamping: min(limits.maximumDeclaredPixelCount, 16384 * 16384))
            var result = avifDecoderSetIOMemory(pointer, bytes.baseAddress, data.count)
            if result == AVIF_RESULT_OK { result = avifDecoderParse(pointer) }
            guard result == AVIF_RESULT_OK else {
                throw WebImageError(.decodeFailed, "AVIF: \(String(cString: avifResultToString(result)))")
            }
        }

        deinit {
            avifDecoderDestroy(pointer)
            bytes.deallocate()
        }

        var image: avifImage { pointer.pointee.image.pointee }

        /// The embedded ICC profile, if any.
        var colorProfile: Data? {
            let icc = image.icc
            guard let data = icc.data, icc.size > 0 else { return nil }
            return Data(bytes: data, count: icc.size)
        }

        /// The file's bit depth and CICP (its `nclx`, else the AV1 stream's; a code point of 2,
        /// "unspecified", is nil), and its gain map.
        var colorDescription: ColorDescription {
            func signalled(_ value: UInt16) -> Int? { value == 2 ? nil : Int(value) }
            return ColorDescription(
                bitDepth: Int(image.depth), primaries: signalled(image.colorPrimaries), transfer: signalled(image.transferCharacteristics),
                matrix: signalled(image.matrixCoefficients)
            ).noting(gainMap)
        }

        /// Whether the stored pixels are turned a quarter or three quarters (so width and height swap).
        var swapsDimensions: Bool {
            image.transformFlags & UInt32(AVIF_TRANSFORM_IROT.rawValue) != 0 && image.irot.angle % 2 == 1
        }
    }

    let decoder: Decoder
    let limits: DecodeLimits
    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount = 0
    let durations: [Duration]
    /// Frames of more than 8 bits come as 16-bit pixels in the file's own colour, not reduced
    /// or tone-mapped (``DecodeOptions/keepsHighBitDepth``).
    var keepsHighBitDepth = false
    /// PQ and HLG frames come as 16-bit pixels, to be tone-mapped together by the caller.
    var tonesTogether = false
    private var position = 0

    init(_ data: Data, limits: DecodeLimits) throws(WebImageError) {
        decoder = try Decoder(data, limits: limits)
        self.limits = limits
        let width = Int(decoder.image.width)
        let height = Int(decoder.image.height)
        try limits.checkDeclared(width: width, height: height)
        try limits.check(width: width, height: height, inputSize: data.count)
        (canvasWidth, canvasHeight) = decoder.swapsDimensions ? (height, width) : (width, height)
        let count = Int(max(1, decoder.pointer.pointee.imageCount))
        var durations: [Duration] = []
        for index in 0..<count where count > 1 {
            var timing = avifImageTiming()
            let seconds = avifDecoderNthImageTiming(decoder.pointer, UInt32(index), &timing) == AVIF_RESULT_OK ? timing.duration : 0
            // As for GIF and WebP: under 11 ms shows as 100 ms.
            durations.append(seconds < 0.011 ? .milliseconds(100) : .milliseconds(Int((seconds * 1000).rounded())))
        }
        self.durations = count > 1 ? durations : [.zero]
    }

    mutating func rewind() throws(WebImageError) {
        position = 0
    }

    mutating func next() throws(WebImageError) -> PixelBuffer {
        let result = avifDecoderNthImage(decoder.pointer, UInt32(position))
        guard result == AVIF_RESULT_OK else {
            throw WebImageError(.decodeFailed, "AVIF frame \(position): \(String(cString: avifResultToString(result)))")
        }
        position += 1
        return try upright(rgba())
    }

    /// The file's colour description.
    var sourceColor: ColorDescription? { decoder.colorDescription }

    var holdsHighBitDepth: Bool {
        keepsHighBitDepth && decoder.colorDescription.bitDepth > 8 || tonesTogether && rendersHDR
    }

    /// Whether frames are PQ or HLG without an ICC profile (which would say otherwise): rendered
    /// to SDR from 16 bits (``HDRRendering``).
    private var rendersHDR: Bool { decoder.colorDescription.isHDR && decoder.colorProfile == nil }

    /// The current frame as 8-bit RGBA, as stored; alpha is 255 without an alpha plane. A PQ or
    /// HLG frame is rendered to SDR from 16 bits (``rendersHDR``); frames the source holds at 16
    /// bits come so (``holdsHighBitDepth``).
    private func rgba() throws(WebImageError) -> PixelBuffer {
        let image = decoder.pointer.pointee.image!
        let width = Int(image.pointee.width)
        let height = Int(image.pointee.height)
        let description = decoder.colorDescription
        if holdsHighBitDepth {
            try limits.checkHighBitDepth(width: width, height: height)
            return PixelBuffer(width: width, height: height, straightRGBA16: try sixteenBitSamples(image, width: width, height: height))
        }
        if rendersHDR {
            try HDRRendering.checkWorkingMemory(width: width, height: height, limits: limits)
            let samples = try sixteenBitSamples(image, width: width, height: height)
            return HDRRendering.pixels(samples, width: width, height: height, description: description)
        }
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.depth = 8
        rgb.rowBytes = UInt32(width * 4)
        var result = AVIF_RESULT_OK
        let pixels = [UInt8](unsafeUninitializedCapacity: try PixelBuffer.byteCount(width: width, height: height)) { buffer, initialized in
            buffer.initialize(repeating: 255)
            initialized = buffer.count
            rgb.pixels = buffer.baseAddress
            result = avifImageYUVToRGB(image, &rgb)
        }
        guard result == AVIF_RESULT_OK else {
            throw WebImageError(.decodeFailed, "AVIF: \(String(cString: avifResultToString(result)))")
        }
        return PixelBuffer(width: width, height: height, straightRGBA: pixels)
    }

    /// The current frame as 16-bit RGBA from libavif (its 10 or 12 bits scaled to 0...65535).
    private func sixteenBitSamples(_ image: UnsafeMutablePointer<avifImage>, width: Int, height: Int) throws(WebImageError) -> [UInt16] {
        let count = try PixelBuffer.byteCount(width: width, height: height)
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.depth = 16
        rgb.rowBytes = UInt32(width * 8)
        var samples = [UInt16](repeating: UInt16.max, count: count)
        let result = samples.withUnsafeMutableBufferPointer { buffer in
            rgb.pixels = UnsafeMutableRawPointer(buffer.baseAddress)?.assumingMemoryBound(to: UInt8.self)
            return avifImageYUVToRGB(image, &rgb)
        }
        guard result == AVIF_RESULT_OK else {
            throw WebImageError(.decodeFailed, "AVIF: \(String(cString: avifResultToString(result)))")
        }
        return samples
    }

    /// The HEIF transforms in their order: rotation (`irot`, counter-clockwise quarter turns),
    /// then mirroring (`imir`: 0 exchanges top and bottom, 1 left and right).
    private func upright(_ pixels: PixelBuffer) -> PixelBuffer {
        let image = decoder.image
        var turned = pixels
        if image.transformFlags & UInt32(AVIF_TRANSFORM_IROT.rawValue) != 0 {
            turned = turned.rotated(quarterTurns: Int(image.irot.angle))
        }
        if image.transformFlags & UInt32(AVIF_TRANSFORM_IMIR.rawValue) != 0 {
            turned = turned.flipped(horizontally: image.imir.mode == 1, vertically: image.imir.mode == 0)
        }
        return turned
    }
}
