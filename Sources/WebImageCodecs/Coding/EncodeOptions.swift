/// How to encode.
public struct EncodeOptions: Sendable, Equatable {
    /// Lossy quality from 0 (smallest) to 1 (best). Default 0.9. Lossless formats ignore it.
    public var quality: Double
    /// Encode losslessly where the format can choose (WebP). Default false.
    public var lossless: Bool

    /// Creates options.
    public init(quality: Double = 0.9, lossless: Bool = false) {
        self.quality = min(1, max(0, quality))
        self.lossless = lossless
    }
}
