/// Turns the pixels upright according to the image's EXIF orientation and marks the result
/// ``ExifOrientation/up``, so that code which ignores orientation shows it right. Exact.
///
/// Key: `orient`.
package struct OrientationTransformer: ImageTransformer, Hashable {
    /// Creates the transformer.
    public init() {}

    public var transformerKey: String { "orient" }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        guard image.orientation != .up, var upright = image.mappingFrames(keepingHighBitDepth: true, { $0.applying(image.orientation) })
        else { return image }
        upright.orientation = .up
        return upright
    }
}
