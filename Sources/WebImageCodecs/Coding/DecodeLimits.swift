/// Bounds a decoder checks before it allocates, against decompression bombs.
public struct DecodeLimits: Sendable, Equatable {
    /// The most pixels an image may have (for an animation, all frames together). Default 64 MP.
    /// A GIF's frames are also checked as their descriptors declare them, before their pixels are
    /// read: each within this limit, all together within four times it.
    public var maximumPixelCount: Int
    /// The most input bytes a decoder accepts. Default 256 MiB.
    public var maximumInputSize: Int
    /// The most pixels a file may declare when it is decoded smaller than it is stored (a JPEG
    /// scaled in the DCT, a still WebP scaled as it decodes, for a thumbnail): those decoders
    /// allocate only for the smaller size, which ``maximumPixelCount`` bounds, so a 100 MP photo
    /// can make a 300 px thumbnail; this hard cap still refuses sizes no one should process.
    /// Default 400 MP (20000 x 20000); never below ``maximumPixelCount``.
    public var maximumDeclaredPixelCount: Int

    /// Creates limits.
    public init(
        maximumPixelCount: Int = 64_000_000, maximumInputSize: Int = 256 * 1024 * 1024, maximumDeclaredPixelCount: Int = 400_000_000
    ) {
        self.maximumPixelCount = maximumPixelCount
        self.maximumInputSize = maximumInputSize
        self.maximumDeclaredPixelCount = maximumDeclaredPixelCount
    }

    /// Throws `WebImageError.Code.tooLarge` when a file declares more than
    /// ``maximumDeclaredPixelCount`` pixels (or ``maximumPixelCount``, if that is larger), for a
    /// decoder that will allocate for a smaller size than the declared one.
    public func checkDeclared(width: Int, height: Int) throws(WebImageError) {
        let cap = max(maximumDeclaredPixelCount, maximumPixelCount)
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= cap else {
            throw WebImageError(.tooLarge, "\(width)x\(height) is over the \(cap)-pixel limit on declared sizes")
        }
    }

    /// Throws `WebImageError.Code.tooLarge` when `width × height` pixels, or `inputSize`
    /// bytes, are over the limits.
    public func check(width: Int, height: Int, inputSize: Int) throws(WebImageError) {
        guard inputSize <= maximumInputSize else {
            throw WebImageError(.tooLarge, "\(inputSize) bytes of input is over the \(maximumInputSize)-byte limit")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= maximumPixelCount else {
            throw WebImageError(.tooLarge, "\(width)x\(height) is over the \(maximumPixelCount)-pixel limit")
        }
    }

    /// Throws `WebImageError.Code.tooLarge` when `width × height` pixels of `bytesPerPixel` bytes
    /// each (`why` says what is held) take more memory than ``maximumPixelCount`` 8-bit RGBA
    /// pixels: the limit counts bytes, so a decode that holds more per pixel may have fewer.
    func checkMemory(width: Int, height: Int, bytesPerPixel: Int, _ why: String) throws(WebImageError) {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        let (bytes, over) = pixels.multipliedReportingOverflow(by: bytesPerPixel)
        guard !overflow, !over, bytes <= maximumPixelCount * 4 else {
            throw WebImageError(.tooLarge, "\(width)x\(height) is over the \(maximumPixelCount)-pixel limit: \(why)")
        }
    }

    /// ``checkMemory(width:height:bytesPerPixel:_:)`` for a 16-bit decode
    /// (``DecodeOptions/keepsHighBitDepth``): 8 bytes a pixel, so half the pixels.
    func checkHighBitDepth(width: Int, height: Int) throws(WebImageError) {
        try checkMemory(width: width, height: height, bytesPerPixel: 8, "it is kept at 16 bits, twice an 8-bit picture's memory")
    }
}
