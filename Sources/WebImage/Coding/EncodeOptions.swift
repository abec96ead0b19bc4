/// How to encode.
public struct EncodeOptions: Sendable, Equatable {
    /// Lossy quality from 0 (smallest) to 1 (best). Default 0.9. Lossless formats ignore it.
    public var quality: Double

    /// Creates options.
    public init(quality: Double = 0.9) {
        self.quality = min(1, max(0, quality))
    }
}
