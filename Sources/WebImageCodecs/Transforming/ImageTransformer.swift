/// Something that makes a new image from an image (SDWebImage's `SDImageTransformer`).
///
/// The ``transformerKey`` becomes part of the cache key of the transformed image, so two
/// transformers with the same key must produce the same pixels. The built-in transformers use
/// their canonical ``TransformSpec`` text as key (`resize:300x200:fill:lanczos3`), which
/// ``TransformSpec/parse(_:)`` turns back into the same transformer.
///
/// Transformers work in pixels, on straight RGBA (premultiplying inside where they mix
/// pixels, see ``PixelBuffer``), and transform every frame they are
/// given. Whether an animated image is transformed at all is the manager's decision
/// (`.transformAnimatedImage`), as in SDWebImage.
public protocol ImageTransformer: Sendable {
    /// A stable text that names this transformer and its parameters.
    var transformerKey: String { get }
    /// The transformed image, or nil when it cannot be made (for example a crop outside the
    /// image). `key` is the cache key of the original image, for transformers that want it.
    func transform(_ image: Image, forKey key: String) -> Image?
}
