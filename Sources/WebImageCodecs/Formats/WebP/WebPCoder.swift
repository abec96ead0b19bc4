package import Foundation
import CWebP

/// WebP through libwebp: lossy, lossless and alpha, decoded to straight RGBA as every other coder
/// here (so lossless files match other decoders exactly and re-encode bit for bit), scaled in the
/// decoder for thumbnails; animations through `WebPAnimDecoder`,
/// each frame the composed canvas, with durations (under 0.011 s becomes 0.1 s, as for GIF)
/// and the loop count. Canvas size and frame count are checked against the limits first.
/// Encodes still (lossy or lossless) and animated WebP.
package struct WebPCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .webP }

    public func canEncode(to format: ImageFormat) -> Bool { format == .webP }

    /// Encodes lossy at ``EncodeOptions/quality``, or lossless with ``EncodeOptions/lossless``;
    /// an animated image becomes an animated WebP with its durations and loop count.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        guard format == .webP else { throw WebImageError(.unsupportedFormat, "WebPCoder encodes only WebP") }
        return image.isAnimated ? try encodeAnimation(image, options: options) : try encodeStill(image.pixels, options: options)
    }

    /// A still through libwebp's advanced API, for the options the simple one has no room for
    /// (the method).
    private func encodeStill(_ pixels: PixelBuffer, options: EncodeOptions) throws(WebImageError) -> Data {
        var config = try Self.config(options)
        return try Self.withPicture(of: pixels, asARGB: options.lossless) { picture in
            Result { () throws(WebImageError) in try Self.encoded(picture, config: &config, describing: "\(pixels.width)x\(pixels.height)")
            }
        }.get()
    }

    /// `picture`, filled in, encoded with `config` into memory; `describing` names it in the error.
    static func encoded(_ picture: UnsafeMutablePointer<WebPPicture>, config: inout WebPConfig, describing: String) throws(WebImageError)
        -> Data
    {
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        let error = withUnsafeMutablePointer(to: &writer) { writer in
            picture.pointee.writer = WebPMemoryWrite
            picture.pointee.custom_ptr = UnsafeMutableRawPointer(writer)
            return WebPEncode(&config, picture) != 0 ? nil : picture.pointee.error_code.rawValue
        }
        guard error == nil, let memory = writer.mem, writer.size > 0 else {
            throw WebImageError(.encodeFailed, "libwebp could not encode \(describing) (error \(error ?? 0))")
        }
        return Data(bytes: memory, count: writer.size)
    }

    /// Runs `body` with a libwebp picture holding `pixels` (straight RGBA), freed afterwards.
    /// A lossy still takes the pixels as YUV at import, in one pass, as libvips does; lossless
    /// and the animation encoder (which accepts ARGB frames only) keep them as ARGB.
    private static func withPicture<Result>(
        of pixels: PixelBuffer, asARGB: Bool, _ body: (UnsafeMutablePointer<WebPPicture>) -> Result
    ) throws(WebImageError) -> Result {
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw WebImageError(.encodeFailed, "libwebp version mismatch") }
        defer { WebPPictureFree(&picture) }
        picture.use_argb = asARGB ? 1 : 0
        picture.width = Int32(pixels.width)
        picture.height = Int32(pixels.height)
        guard WebPPictureImportRGBA(&picture, pixels.bytes, Int32(pixels.bytesPerRow)) != 0 else {
            throw WebImageError(.encodeFailed, "libwebp could not take \(pixels.width)x\(pixels.height) pixels")
        }
        return body(&picture)
    }

    /// libwebp's configuration for `options`.
    static func config(_ options: EncodeOptions) throws(WebImageError) -> WebPConfig {
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw WebImageError(.encodeFailed, "libwebp version mismatch") }
        if options.webPPreset != .default {
            let presets: [WebPEncodingPreset: CWebP.WebPPreset] = [
                .picture: WEBP_PRESET_PICTURE, .photo: WEBP_PRESET_PHOTO, .drawing: WEBP_PRESET_DRAWING, .icon: WEBP_PRESET_ICON,
                .text: WEBP_PRESET_TEXT,
            ]
            guard let preset = presets[options.webPPreset], WebPConfigPreset(&config, preset, Float(options.quality * 100)) != 0 else {
                throw WebImageError(.encodeFailed, "libwebp version mismatch")
            }
        }
        config.lossless = options.lossless ? 1 : 0
        // Lossless keeps the colour of transparent pixels too (libwebp would otherwise rewrite
        // it to compress better), so decoding and re-encoding changes no value.
        config.exact = options.lossless ? 1 : 0
        config.quality = Float(options.quality * 100)
        config.method = Int32(options.webPMethod)
        guard WebPValidateConfig(&config) != 0 else { throw WebImageError(.encodeFailed, "libwebp refused the options") }
        return config
    }

    private func encodeAnimation(_ image: Image, options: EncodeOptions) throws(WebImageError) -> Data {
        var encoderOptions = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&encoderOptions) != 0 else { throw WebImageError(.encodeFailed, "libwebp version mismatch") }
        encoderOptions.anim_params.loop_count = Int32(clamping: image.loopCount)
        guard let encoder = WebPAnimEncoderNew(Int32(image.pixelWidth), Int32(image.pixelHeight), &encoderOptions) else {
            throw WebImageError(.encodeFailed, "libwebp could not start an animation")
        }
        defer { WebPAnimEncoderDelete(encoder) }
        var config = try Self.config(options)
        var timestamp = 0
        for frame in image.frames {
            try add(frame.pixels, to: encoder, at: timestamp, config: &config)
            timestamp += Int(MonotonicClock.nanoseconds(frame.duration) / 1_000_000)
        }
        var assembled = WebPData()
        guard WebPAnimEncoderAdd(encoder, nil, Int32(clamping: timestamp), nil) != 0,
            WebPAnimEncoderAssemble(encoder, &assembled) != 0, let bytes = assembled.bytes
        else {
            throw WebImageError(.encodeFailed, "libwebp could not assemble the animation")
        }
        defer { WebPDataClear(&assembled) }
        return Data(bytes: bytes, count: assembled.size)
    }

    private func add(_ pixels: PixelBuffer, to encoder: OpaquePointer, at timestamp: Int, config: inout WebPConfig) throws(WebImageError) {
        let added = try Self.withPicture(of: pixels, asARGB: true) { picture in
            WebPAnimEncoderAdd(encoder, picture, Int32(clamping: timestamp), &config) != 0
        }
        guard added else { throw WebImageError(.encodeFailed, "libwebp could not add a frame") }
    }

    public func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        try data.withTypedBytes { bytes throws(WebImageError) in try decode(bytes.bindMemory(to: UInt8.self), options: options) }
    }

    /// Whether the data is an animated WebP, from its header.
    static func isAnimated(_ data: Data) -> Bool {
        (features(data)?.has_animation ?? 0) != 0
    }

    /// What the header declares (for an animation, the canvas size); nil when it is unreadable.
    static func features(_ data: Data) -> WebPBitstreamFeatures? {
        var features = WebPBitstreamFeatures()
        let status = data.withUnsafeBytes { bytes in
            WebPGetFeatures(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &features)
        }
        return status == VP8_STATUS_OK ? features : nil
    }

    private func decode(_ bytes: UnsafeBufferPointer<UInt8>, options: DecodeOptions) throws(WebImageError) -> Image {
        var features = WebPBitstreamFeatures()
        guard WebPGetFeatures(bytes.baseAddress, bytes.count, &features) == VP8_STATUS_OK else {
            throw WebImageError(.decodeFailed, "WebP header unreadable")
        }
        try options.limits.checkDeclared(width: Int(features.width), height: Int(features.height))
        if features.has_animation != 0 {
            try options.limits.check(width: Int(features.width), height: Int(features.height), inputSize: bytes.count)
        }
        if features.has_animation != 0 && !options.firstFrameOnly {
            return try decodeAnimation(bytes, options: options)
        }
        if features.has_animation != 0 {
            return try decodeAnimation(bytes, options: options, frameLimit: 1)
        }
        return try decodeStill(bytes, features: features, options: options)
    }

    private func decodeStill(_ bytes: UnsafeBufferPointer<UInt8>, features: WebPBitstreamFeatures, options: DecodeOptions)
        throws(WebImageError) -> Image
    {
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else { throw WebImageError(.decodeFailed, "libwebp version mismatch") }
        let (width, height) = Self.outputSize(Int(features.width), Int(features.height), thumbnail: options.thumbnail)
        // libwebp scales a lossy still row by row as it decodes, so only the output is allocated;
        // a lossless one (and a lossy one's alpha plane) is decoded whole first.
        let decodesWhole = features.format != 1 || features.has_alpha != 0
        try options.limits.check(
            width: decodesWhole ? Int(features.width) : width, height: decodesWhole ? Int(features.height) : height, inputSize: bytes.count)
        if (width, height) != (Int(features.width), Int(features.height)) {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(width)
            config.options.scaled_height = Int32(height)
        }
        var status = VP8_STATUS_OK
        // Every byte is written by the decoder, so the buffer is not zeroed first.
        let pixels = [UInt8](unsafeUninitializedCapacity: try PixelBuffer.byteCount(width: width, height: height)) { buffer, initialized in
            config.output.colorspace = MODE_RGBA
            config.output.is_external_memory = 1
            config.output.u.RGBA.rgba = buffer.baseAddress
            config.output.u.RGBA.stride = Int32(width * 4)
            config.output.u.RGBA.size = buffer.count
            status = WebPDecode(bytes.baseAddress, bytes.count, &config)
            if status != VP8_STATUS_OK { buffer.initialize(repeating: 0) }
            initialized = buffer.count
        }
        guard status == VP8_STATUS_OK else { throw WebImageError(.decodeFailed, "WebP: status \(status.rawValue)") }
        return Image(
            pixels: PixelBuffer(width: width, height: height, straightRGBA: pixels), scale: options.scale, sourceFormat: .webP,
            hasAlpha: features.has_alpha != 0)
    }

    private func decodeAnimation(_ bytes: UnsafeBufferPointer<UInt8>, options: DecodeOptions, frameLimit: Int = .max) throws(WebImageError)
        -> Image
    {
        var source = try WebPFrameSource(Data(buffer: bytes), limits: options.limits)
        var limited = options
        limited.firstFrameOnly = options.firstFrameOnly || frameLimit == 1
        return try source.image(options: limited, inputSize: bytes.count, format: .webP)
    }

    /// The size to decode at: the thumbnail's box when one is asked for and it is smaller,
    /// keeping the aspect ratio when the thumbnail says so.
    private static func outputSize(_ width: Int, _ height: Int, thumbnail: ThumbnailSize?) -> (Int, Int) {
        guard let thumbnail, thumbnail.width > 0, thumbnail.height > 0, thumbnail.width < width || thumbnail.height < height else {
            return (width, height)
        }
        guard thumbnail.preservesAspectRatio else { return (min(width, thumbnail.width), min(height, thumbnail.height)) }
        let scale = min(Double(thumbnail.width) / Double(width), Double(thumbnail.height) / Double(height))
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }
}

extension WebPCoder: ProgressiveImageCoder, AnimatedImageCoder {
    /// Rows, as libwebp's incremental decoder gives them.
    public func incrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        format == .webP ? ProgressiveWebPDecoder(options: options) : nil
    }

    /// An animated WebP's frames on demand; nil for a still one.
    public func animatedImageProvider(for data: Data, format: ImageFormat, options: DecodeOptions, maximumBufferedFrames: Int)
        throws(WebImageError) -> (any AnimatedImageProvider)?
    {
        guard format == .webP, Self.isAnimated(data) else { return nil }
        return AnimatedImageDecoder.ifAnimated(
            try WebPFrameSource(data, limits: options.limits), maximumBufferedFrames: maximumBufferedFrames)
    }
}
