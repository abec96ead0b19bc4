package import Foundation
import CWebImageCodecs

/// PNG through libpng: every colour type and bit depth decoded to 8-bit straight RGBA (16-bit
/// samples are reduced to 8 with rounding; a file whose `cICP` says PQ or HLG is decoded at 16
/// bits and tone-mapped, ``HDRRendering``), or a 16-bit file to 16-bit RGBA with
/// ``DecodeOptions/keepsHighBitDepth``; transparency from an alpha channel or tRNS kept; the
/// common non-interlaced file (8-bit, or 16-bit RGB or RGBA) inflated at once by libdeflate. Encoding from straight RGBA
/// (RGB when the image is opaque), rows filtered adaptively and deflated by libdeflate at
/// ``EncodeOptions/pngCompressionLevel``, optionally interlaced or reduced to a palette. For a thumbnail, a
/// non-interlaced file is reduced by a whole factor while its rows are read, so a 10000x10000
/// PNG never holds its full 400 MB of pixels; an interlaced one is decoded whole, then reduced. Animated PNG
/// (APNG) is read and written through `APNGReader` and `APNGWriter`, with libpng decoding
/// and encoding each frame.
package struct PNGCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .png }

    public func canEncode(to format: ImageFormat) -> Bool { format == .png }

    public func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        try data.withTypedBytes { bytes throws(WebImageError) in try decode(bytes, options: options) }
    }

    private func decode(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions) throws(WebImageError) -> Image {
        guard APNGReader.isAnimated(bytes) else { return try decodeStill(bytes, options: options) }
        // Frames kept at 16 bits, or PQ and HLG ones, are held at 16 bits until all are composed:
        // then PQ and HLG are tone-mapped together, from one peak (Image.reducedToEightBits()).
        let wide = Self.wideDescription(in: bytes, keepsHighBitDepth: options.keepsHighBitDepth)
        let opening = try APNGFrameSource.open(
            bytes, limits: options.limits, wide: wide, decodeFrame: Self.frameDecoder(options, wide: wide != nil))
        switch opening {
        case .animation(var source):
            let image = try source.image(options: options, inputSize: bytes.count, format: .png)
            return options.keepsHighBitDepth ? image : image.reducedToEightBits()
        case .unplayable(let reason):
            // libpng skips the animation's chunks (ancillary to it): what is left is the default
            // image, which the APNG specification has decoders show when the animation fails.
            var image = try decodeStill(bytes, options: options)
            image.warnings.append("APNG: \(reason): the animation is dropped, the default image shown")
            return image
        }
    }

    /// Decodes one frame of an APNG, rebuilt as a still PNG: at 16 bits when `wide` (a 16-bit or
    /// a PQ or HLG file's, kept as it is), else at 8.
    static func frameDecoder(_ options: DecodeOptions, wide: Bool = false) -> @Sendable (Data) throws(WebImageError) -> PixelBuffer {
        { (frame: Data) throws(WebImageError) -> PixelBuffer in
            // A frame is composed at its own size; only the composed image may be made smaller.
            var frameOptions = options
            frameOptions.thumbnail = nil
            frameOptions.keepsHighBitDepth = wide
            return try frame.withTypedBytes { bytes throws(WebImageError) in try PNGCoder().decodeStill(bytes, options: frameOptions).pixels
            }
        }
    }

    /// One image through the C shim's full libpng reader (the simplified API would treat 16-bit
    /// samples as linear light and brighten them), or its direct path for the common file (see
    /// `cwi_png_decode_rgba`); `direct` false keeps libpng for every row (tests compare the two).
    func decodeStill(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions, direct: Bool = true) throws(WebImageError) -> Image {
        let source = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var header = cwi_header_info()
        guard cwi_png_read_header(source, bytes.count, &header) == 0 else {
            throw WebImageError(.decodeFailed, "PNG: \(Self.message(header.message))")
        }
        let reduction = Self.reduction(width: Int(header.width), height: Int(header.height), thumbnail: options.thumbnail)
        let width = (Int(header.width) + reduction - 1) / reduction
        let height = (Int(header.height) + reduction - 1) / reduction
        // The pixel limit applies to what is allocated: a reduced decode holds one source row,
        // but an interlaced one the whole image before it is reduced.
        if reduction > 1 { try options.limits.checkDeclared(width: Int(header.width), height: Int(header.height)) }
        if reduction > 1, header.progressive != 0 {
            try options.limits.check(width: Int(header.width), height: Int(header.height), inputSize: bytes.count)
        }
        try options.limits.check(width: width, height: height, inputSize: bytes.count)
        if let wide = Self.wideDescription(in: bytes, keepsHighBitDepth: options.keepsHighBitDepth) {
            return try decodeWide(bytes, header: header, description: wide, options: options, reduction: reduction, direct: direct)
        }
        var outcome = cwi_png_outcome()
        var status: Int32 = -1
        let pixels = [UInt8](unsafeUninitializedCapacity: try PixelBuffer.byteCount(width: width, height: height)) { buffer, initialized in
            buffer.initialize(repeating: 0)
            initialized = buffer.count
            status = cwi_png_decode_rgba(
                source, bytes.count, buffer.baseAddress, buffer.count, header.width, header.height, UInt32(reduction),
                options.acceptsTruncatedImages ? 1 : 0, direct ? 1 : 0, 8, &outcome)
        }
        return try Self.image(
            PixelBuffer(width: width, height: height, straightRGBA: pixels), status: status, outcome: outcome, options: options)
    }

    /// The decoded pixels as an image with libpng's warnings, or libpng's error.
    private static func image(_ pixels: PixelBuffer, status: Int32, outcome: cwi_png_outcome, options: DecodeOptions) throws(WebImageError)
        -> Image
    {
        guard status == 0 else { throw failure(outcome) }
        // The rows a file cut short never reached are transparent.
        let hasAlpha = outcome.has_alpha != 0 || outcome.partial != 0
        var image = Image(pixels: pixels, scale: options.scale, sourceFormat: .png, hasAlpha: hasAlpha)
        let warnings = Self.message(outcome.warnings)
        image.warnings = warnings.isEmpty ? [] : warnings.components(separatedBy: "; ")
        image.isPartial = outcome.partial != 0
        if image.isPartial { image.warnings.append("the data ended before the image: \(Self.message(outcome.message))") }
        return image
    }

    private static func failure(_ outcome: cwi_png_outcome) -> WebImageError {
        WebImageError(.decodeFailed, "PNG: \(message(outcome.message))")
    }

    /// The bit depth and `cICP` of a file decoded at 16 bits: one whose `cICP` chunk (before the
    /// image data, as PNG Third Edition places it) says PQ or HLG, or, when `keepsHighBitDepth`,
    /// one of 16 bits a sample; nil for any other file.
    static func wideDescription(in bytes: UnsafeRawBufferPointer, keepsHighBitDepth: Bool = false) -> ColorDescription? {
        var description: ColorDescription?
        PNGChunk.forEachBeforeImageData(in: bytes) { type, data in PNGChunk.describe(&description, type: type, data: data) }
        guard let description, description.isHDR || (keepsHighBitDepth && description.bitDepth == 16) else { return nil }
        return description
    }

    /// A file decoded at 16 bits: kept so (``DecodeOptions/keepsHighBitDepth``; for a thumbnail
    /// reduced by `reduction` as it is read, unless interlaced) or, for PQ and HLG, tone-mapped
    /// to 8-bit sRGB (``HDRRendering``) from the whole image (the tone curve needs its peak; a
    /// thumbnail is resampled from it). The `cICP` chunk says how its samples are coded, and wins
    /// over any profile or gamma chunk (PNG Third Edition, 4.3).
    private func decodeWide(
        _ bytes: UnsafeRawBufferPointer, header: cwi_header_info, description: ColorDescription, options: DecodeOptions, reduction: Int,
        direct: Bool
    ) throws(WebImageError) -> Image {
        let reduction = options.keepsHighBitDepth && header.progressive == 0 ? reduction : 1
        let (width, height) = ((Int(header.width) + reduction - 1) / reduction, (Int(header.height) + reduction - 1) / reduction)
        try options.limits.check(width: width, height: height, inputSize: bytes.count)
        if options.keepsHighBitDepth {
            try options.limits.checkHighBitDepth(width: width, height: height)
        } else {
            try HDRRendering.checkWorkingMemory(width: width, height: height, limits: options.limits)
        }
        var outcome = cwi_png_outcome()
        var status: Int32 = -1
        let samples = [UInt16](unsafeUninitializedCapacity: width * height * 4) { buffer, initialized in
            buffer.initialize(repeating: 0)
            initialized = buffer.count
            let output = UnsafeMutableRawBufferPointer(buffer)
            status = cwi_png_decode_rgba(
                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count,
                output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                output.count, header.width, header.height, UInt32(reduction), options.acceptsTruncatedImages ? 1 : 0, direct ? 1 : 0, 16,
                &outcome)
        }
        guard status == 0 else { throw Self.failure(outcome) }
        let pixels =
            options.keepsHighBitDepth
            ? PixelBuffer(width: width, height: height, straightRGBA16: samples)
            : HDRRendering.pixels(samples, width: width, height: height, description: description)
        var image = try Self.image(pixels, status: status, outcome: outcome, options: options)
        image.sourceColor = description
        return image
    }

    /// The whole factor a thumbnail lets a non-interlaced PNG be reduced by while it is read (a
    /// box average of each block), keeping the result at least the size the thumbnail needs:
    /// the fitted size when the aspect ratio is kept, the box otherwise. The rest of the way is
    /// resampled by ``CodersManager``, as after JPEG's DCT scaling. 1 without a thumbnail.
    static func reduction(width: Int, height: Int, thumbnail: ThumbnailSize?) -> Int {
        guard let thumbnail, thumbnail.width > 0, thumbnail.height > 0, width > 0, height > 0 else { return 1 }
        let needed = thumbnail.neededSize(forWidth: width, height: height)
        return max(1, min(width / max(1, needed.width), height / max(1, needed.height)))
    }

    private static func message<Message>(_ tuple: Message) -> String {
        withUnsafeBytes(of: tuple) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        guard format == .png else { throw WebImageError(.unsupportedFormat, "PNGCoder encodes only PNG") }
        var writing = cwi_png_write_options()
        writing.level = Int32(min(9, max(0, options.pngCompressionLevel)))
        writing.interlaced = options.pngInterlaced ? 1 : 0
        guard image.isAnimated else {
            if let colors = options.pngPaletteColors {
                return try encodePalette(image.pixels.reducedToEightBits(describedBy: image.sourceColor), colors: colors, writing: writing)
            }
            let layout = SampleLayout(grey: image.isStoredAsGrey, opaque: image.pixels.isOpaque)
            if image.pixels.isHighBitDepth {
                return try encodeSixteenBits(image.pixels, layout: layout, color: image.sourceColor, writing: writing)
            }
            return try encode(image.pixels, layout: layout, writing: writing)
        }
        // Every frame of an APNG shares one colour type and depth: RGBA as soon as any frame has
        // alpha, 16 bits when every frame has them.
        let layout = SampleLayout(grey: false, opaque: image.frames.allSatisfy { $0.pixels.isOpaque })
        if image.frames.allSatisfy(\.pixels.isHighBitDepth) {
            return try APNGWriter.encode(image) { (pixels: PixelBuffer) throws(WebImageError) -> Data in
                try encodeSixteenBits(pixels, layout: layout, color: image.sourceColor, writing: writing)
            }
        }
        return try APNGWriter.encode(image.reducedToEightBits()) { (pixels: PixelBuffer) throws(WebImageError) -> Data in
            try encode(pixels, layout: layout, writing: writing)
        }
    }

    /// Which of each RGBA pixel's samples a file stores, and its colour type: grey (0, or 4 with
    /// alpha) for ``Image/isStoredAsGrey`` (imgproxy's `TestColorspace`: a grey source's PNG is
    /// B_W or GREY16); else RGB (2) or RGBA (6).
    struct SampleLayout {
        let channels: [Int]
        let colorType: UInt8

        init(grey: Bool, opaque: Bool) {
            switch (grey, opaque) {
            case (true, true): (channels, colorType) = ([0], 0)
            case (true, false): (channels, colorType) = ([0, 3], 4)
            case (false, true): (channels, colorType) = ([0, 1, 2], 2)
            case (false, false): (channels, colorType) = ([0, 1, 2, 3], 6)
            }
        }
    }

    /// 8-bit pixels in `layout`, filtered and deflated by the C shim (PNGEncode.c).
    private func encode(_ pixels: PixelBuffer, layout: SampleLayout, writing: cwi_png_write_options) throws(WebImageError) -> Data {
        let source = layout.channels.count == 4 ? pixels.bytes : Self.samples(pixels.bytes, keeping: layout.channels)
        let imageData = try Self.compressed(pixels.width, pixels.height) { out, size in
            cwi_png_compress_image(
                source, UInt32(pixels.width), UInt32(pixels.height), Int32(layout.channels.count), 8, writing, &out, &size)
        }
        return Self.file(
            width: pixels.width, height: pixels.height, bitDepth: 8, colorType: layout.colorType, interlaced: writing.interlaced != 0,
            palette: nil, imageData: imageData)
    }

    /// 16-bit pixels in `layout`, with a `cICP` chunk when the source signalled its primaries and
    /// transfer (PNG Third Edition: matrix 0, full range), so a PQ or HLG picture stays one;
    /// otherwise `sRGB`, as an 8-bit file.
    private func encodeSixteenBits(
        _ pixels: PixelBuffer, layout: SampleLayout, color: ColorDescription?, writing: cwi_png_write_options
    ) throws(WebImageError) -> Data {
        let channels = layout.channels
        let samples = pixels.samples16
        let bigEndian = [UInt8](unsafeUninitializedCapacity: pixels.width * pixels.height * channels.count * 2) { output, initialized in
            var index = 0
            for pixel in 0..<(pixels.width * pixels.height) {
                for channel in channels {
                    let sample = samples[pixel * 4 + channel]
                    output[index] = UInt8(sample >> 8)
                    output[index + 1] = UInt8(sample & 0xFF)
                    index += 2
                }
            }
            initialized = index
        }
        let imageData = try Self.compressed(pixels.width, pixels.height) { out, size in
            cwi_png_compress_image(
                bigEndian, UInt32(pixels.width), UInt32(pixels.height), Int32(channels.count), 16, writing, &out, &size)
        }
        var codePoints: [UInt8]?
        if let color, let primaries = color.primaries, let transfer = color.transfer, primaries < 256, transfer < 256 {
            codePoints = [UInt8(primaries), UInt8(transfer), 0, 1]
        }
        return Self.file(
            width: pixels.width, height: pixels.height, bitDepth: 16, colorType: layout.colorType, interlaced: writing.interlaced != 0,
            palette: nil, codePoints: codePoints, imageData: imageData)
    }

    /// A palette of at most `colors` entries (Quantize.c), indexes packed to the fewest bits
    /// that hold the colours asked for, as imgproxy chooses them (more than 16: 8 bits; more
    /// than 4: 4; more than 2: 2; else 1).
    private func encodePalette(_ pixels: PixelBuffer, colors: Int, writing: cwi_png_write_options) throws(WebImageError) -> Data {
        let limit = min(256, max(2, colors))
        var indexes = [UInt8](repeating: 0, count: pixels.width * pixels.height)
        var palette = [UInt8](repeating: 0, count: 256 * 4)
        let found = cwi_quantize(pixels.bytes, UInt32(pixels.width), UInt32(pixels.height), Int32(limit), &indexes, &palette)
        guard found > 0 else { throw WebImageError(.encodeFailed, "PNG: out of memory for the palette") }
        let bitDepth: UInt8 = limit > 16 ? 8 : limit > 4 ? 4 : limit > 2 ? 2 : 1
        var writing = writing
        writing.palette = 1
        let imageData = try Self.compressed(pixels.width, pixels.height) { out, size in
            cwi_png_compress_image(indexes, UInt32(pixels.width), UInt32(pixels.height), 1, Int32(bitDepth), writing, &out, &size)
        }
        return Self.file(
            width: pixels.width, height: pixels.height, bitDepth: bitDepth, colorType: 3, interlaced: writing.interlaced != 0,
            palette: Array(palette[..<(Int(found) * 4)]), imageData: imageData)
    }

    /// The image data a `cwi_png_compress_image` call wrote, copied out of the C buffer.
    private static func compressed(
        _ width: Int, _ height: Int, _ compress: (inout UnsafeMutablePointer<UInt8>?, inout Int) -> Int32
    ) throws(WebImageError) -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        guard compress(&output, &size) == 0, let output else {
            throw WebImageError(.encodeFailed, "PNG: \(width)x\(height) could not be encoded (out of memory, or too large)")
        }
        defer { cwi_png_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }

    /// A PNG file around `imageData`: IHDR, `cICP` with `codePoints` or else sRGB (perceptual, as
    /// libpng's simplified writer marked 8-bit output), PLTE and tRNS (up to the last entry that is not opaque) for a palette of
    /// RGBA entries, IDAT in pieces of 256 KiB (so that a reader decoding as bytes arrive gets
    /// whole chunks early), IEND.
    static func file(
        width: Int, height: Int, bitDepth: UInt8, colorType: UInt8, interlaced: Bool, palette: [UInt8]?, codePoints: [UInt8]? = nil,
        imageData: [UInt8]
    ) -> Data {
        let header =
            PNGChunk.bigEndian(UInt32(width)) + PNGChunk.bigEndian(UInt32(height)) + [bitDepth, colorType, 0, 0, interlaced ? 1 : 0]
        var chunks = [PNGChunk(type: "IHDR", data: header), PNGChunk(type: codePoints == nil ? "sRGB" : "cICP", data: codePoints ?? [0])]
        if let palette {
            let entries = stride(from: 0, to: palette.count, by: 4)
            chunks.append(PNGChunk(type: "PLTE", data: entries.flatMap { palette[$0..<$0 + 3] }))
            let alphas = entries.map { palette[$0 + 3] }
            if let last = alphas.lastIndex(where: { $0 != 255 }) { chunks.append(PNGChunk(type: "tRNS", data: Array(alphas[...last]))) }
        }
        for start in stride(from: 0, to: imageData.count, by: 256 * 1024) {
            chunks.append(PNGChunk(type: "IDAT", data: Array(imageData[start..<min(imageData.count, start + 256 * 1024)])))
        }
        chunks.append(PNGChunk(type: "IEND", data: []))
        var bytes = PNGChunk.signature
        for chunk in chunks { bytes += chunk.encoded }
        return Data(bytes)
    }

    /// The `channels` of each RGBA pixel of `rgba`, in order.
    private static func samples(_ rgba: [UInt8], keeping channels: [Int]) -> [UInt8] {
        let pixels = rgba.count / 4
        return [UInt8](unsafeUninitializedCapacity: pixels * channels.count) { output, initialized in
            rgba.withUnsafeBufferPointer { source in
                if channels == [0, 1, 2] {
                    // The common opaque picture: unrolled.
                    for pixel in 0..<pixels {
                        output[pixel * 3] = source[pixel * 4]
                        output[pixel * 3 + 1] = source[pixel * 4 + 1]
                        output[pixel * 3 + 2] = source[pixel * 4 + 2]
                    }
                } else {
                    var index = 0
                    for pixel in 0..<pixels {
                        for channel in channels {
                            output[index] = source[pixel * 4 + channel]
                            index += 1
                        }
                    }
                }
            }
            initialized = pixels * channels.count
        }
    }

}

extension PNGCoder: HighBitDepthEncoding {}

extension PNGCoder: ProgressiveImageCoder, AnimatedImageCoder {
    /// Rows, or Adam7 passes for an interlaced PNG.
    public func incrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        format == .png ? ProgressivePNGDecoder(options: options) : nil
    }

    /// An APNG's frames on demand; nil for a still PNG.
    public func animatedImageProvider(for data: Data, format: ImageFormat, options: DecodeOptions, maximumBufferedFrames: Int)
        throws(WebImageError) -> (any AnimatedImageProvider)?
    {
        guard format == .png, data.withUnsafeBytes({ APNGReader.isAnimated($0) }) else { return nil }
        let opening = try data.withTypedBytes { bytes throws(WebImageError) in
            try APNGFrameSource.open(bytes, limits: options.limits, decodeFrame: PNGCoder.frameDecoder(options))
        }
        // An animation with no frame to play is its default image: a still.
        guard case .animation(let source) = opening else { return nil }
        return AnimatedImageDecoder.ifAnimated(source, maximumBufferedFrames: maximumBufferedFrames)
    }
}
