/// The one check every allocation of pixels goes through: decoders, transformers, the canvas
/// and the resampler ask ``PixelBuffer/byteCount(width:height:bytesPerPixel:)`` for the size of
/// what they are about to allocate, and a size past the limit (or one whose byte count does not
/// fit in an `Int`) is a `WebImageError.Code.tooLarge` error before any memory is asked for.
///
/// Why a check of its own: Swift traps when an allocation fails, so one request that makes a
/// transformer ask for 268 GB ended the whole process. The configured limits (``DecodeLimits``
/// for decoders, a server's result limits for its plans) refuse sizes earlier and more tightly;
/// this is the floor under all of them, for a size no caller checked.
extension PixelBuffer {
    /// The most pixels one buffer may hold: 400 MP, ``DecodeLimits``' hard cap on declared sizes
    /// (20000 x 20000, 1.6 GB of RGBA).
    public static let maximumPixelCount = 400_000_000

    /// The bytes of a `width` x `height` buffer of `bytesPerPixel`-byte pixels.
    /// - Throws: `WebImageError.Code.tooLarge` when a side is negative, the product overflows,
    ///   or the pixels are over ``maximumPixelCount``.
    public static func byteCount(width: Int, height: Int, bytesPerPixel: Int = 4) throws(WebImageError) -> Int {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard width >= 0, height >= 0, !overflow, pixels <= maximumPixelCount else {
            throw WebImageError(.tooLarge, "a \(width)x\(height) image is over the \(maximumPixelCount)-pixel limit of one buffer")
        }
        return pixels * bytesPerPixel
    }

    /// Zeroed bytes for a `width` x `height` buffer of `bytesPerPixel`-byte pixels, after the
    /// check of ``byteCount(width:height:bytesPerPixel:)``.
    static func zeroedBytes(width: Int, height: Int, bytesPerPixel: Int = 4) throws(WebImageError) -> [UInt8] {
        [UInt8](repeating: 0, count: try byteCount(width: width, height: height, bytesPerPixel: bytesPerPixel))
    }
}
