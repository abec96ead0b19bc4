/// Mirrors the image (SDWebImage's `SDImageFlippingTransformer`). Exact.
///
/// Key: `flip:h`, `flip:v` or `flip:hv`.
public struct FlippingTransformer: ImageTransformer, Hashable {
    /// Mirror left to right.
    public var horizontal: Bool
    /// Mirror top to bottom.
    public var vertical: Bool

    /// Creates a flip.
    public init(horizontal: Bool, vertical: Bool) {
        self.horizontal = horizontal
        self.vertical = vertical
    }

    public var transformerKey: String { "flip:" + (horizontal ? "h" : "") + (vertical ? "v" : "") }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        image.mappingFrames(keepingHighBitDepth: true) { $0.flipped(horizontally: horizontal, vertically: vertical) }
    }
}
