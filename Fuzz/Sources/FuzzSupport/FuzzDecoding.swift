import Foundation
public import WebImageCodecs

/// The built-in coder for `format` (the coders themselves are not public: a manager lists them).
public func builtInCoder(for format: ImageFormat) -> any ImageCoder {
    guard let coder = CodersManager.builtInCoders.first(where: { $0.canDecode(format) }) else {
        preconditionFailure("no built-in coder decodes \(format)")
    }
    return coder
}

/// What every fuzz target does with its input: it must decode through `coder` or fail with a
/// WebImageError, never crash, leak or allocate past the limits — at full size, as a thumbnail
/// and first frame only, with truncated data allowed, through the incremental decoder (fed in ten
/// pieces), through the animated image provider, through `CodersManager`'s decode with its colour
/// conversion and metadata, re-encoded with the metadata kept, and at its high bit depth (whole
/// and as a thumbnail), written back at that depth and reduced to 8 bits.
public func fuzzDecoding(_ bytes: UnsafePointer<UInt8>, _ count: Int, with coder: any ImageCoder) {
    let data = Data(bytes: bytes, count: count)
    let limits = DecodeLimits(maximumPixelCount: 4_000_000, maximumInputSize: 1 << 20)
    _ = try? ImageHeader(data: data)
    for options in [
        DecodeOptions(limits: limits), DecodeOptions(limits: limits, thumbnail: .init(width: 16, height: 16), firstFrameOnly: true),
        DecodeOptions(limits: limits, acceptsTruncatedImages: true),
    ] {
        _ = try? coder.decode(data, options: options)
    }
    let manager = CodersManager(coders: [coder])
    // The one decode path: colour metadata read and converted (or kept), EXIF kept, then written
    // back by the encoder with the orientation set.
    if let image = try? manager.decode(data, options: DecodeOptions(limits: limits)) { _ = image.convertingToSRGB() }
    if let kept = try? manager.decode(data, options: DecodeOptions(limits: limits, keepsColorProfile: true, keepsEXIF: true)),
        let format = kept.sourceFormat, coder.canEncode(to: format)
    {
        _ = try? manager.encode(kept, as: format)
    }
    fuzzHighBitDepth(data, limits: limits, manager: manager)
    // The progressive coder keeps its codec's state between pieces: feed it ten of them.
    if let progressive = manager.incrementalDecoder(for: data, options: DecodeOptions(limits: limits)) {
        for end in stride(from: max(1, count / 10), to: count, by: max(1, count / 10)) { _ = progressive.update(data.prefix(end)) }
        _ = progressive.update(data)
    }
    if let animated = try? manager.animatedImageProvider(for: data, options: DecodeOptions(limits: limits), maximumBufferedFrames: 2) {
        _ = try? animated.frame(at: animated.frameCount - 1)
        _ = try? animated.frame(at: 0)
    }
}

/// The 16-bit paths (``DecodeOptions/keepsHighBitDepth``): the decode whole and as a thumbnail, the
/// encoder at that depth, and the reduction to 8 bits.
private func fuzzHighBitDepth(_ data: Data, limits: DecodeLimits, manager: CodersManager) {
    var options = DecodeOptions(limits: limits)
    options.keepsHighBitDepth = true
    if let image = try? manager.decode(data, options: options) {
        _ = image.reducedToEightBits()
        if let format = image.sourceFormat { _ = try? manager.encode(image, as: format) }
    }
    options.thumbnail = ThumbnailSize(width: 16, height: 16)
    _ = try? manager.decode(data, options: options)
}
