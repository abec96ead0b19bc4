/// `unsharp_masking`/`ush:MODE:WEIGHT:DIVIDER` (paid edition): a 3x3 sharpening after a
/// resize, `UnsharpMaskTransformer`.
public struct UnsharpMasking: Sendable, Equatable {
    public enum Mode: String, Sendable, CaseIterable {
        /// Only when the image was scaled down and `sharpen` is not set.
        case auto
        /// Never.
        case none
        /// Every result.
        case always
    }

    /// When the mask applies.
    public var mode: Mode
    /// How much the neighbours count, above 0. imgproxy's default 1.
    public var weight = 1.0
    /// The strength's divisor, above 0: the smaller, the sharper. imgproxy's default 24.
    public var divider = 24.0

    /// Unsharp masking in `mode` with imgproxy Pro's default weight and divider.
    public init(mode: Mode) { self.mode = mode }
}
