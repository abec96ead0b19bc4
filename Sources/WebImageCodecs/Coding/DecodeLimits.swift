/// Bounds a decoder checks before it allocates, against decompression bombs.
public struct DecodeLimits: Sendable, Equatable {
    /// The most pixels an image may have (for an animation, all frames together). Default 64 MP.
    /// A GIF's frames are also checked as their descriptors declare them, before giflib reads
    /// them: each within this limit, all together within four times it.
    public var maximumPixelCount: Int
    /// The most input bytes a decoder accepts. Default 256 MiB.
    public var maximumInputSize: Int

    /// Creates limits.
    public init(maximumPixelCount: Int = 64_000_000, maximumInputSize: Int = 256 * 1024 * 1024) {
        self.maximumPixelCount = maximumPixelCount
        self.maximumInputSize = maximumInputSize
    }

    /// Throws ``WebImageError/Code/tooLarge`` when `width × height` pixels, or `inputSize`
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
}
