/// How a resize fits an image into the requested size (SDWebImage's `SDImageScaleMode`).
public enum ResizeMode: String, Sendable, Hashable, CaseIterable {
    /// Stretch to exactly the size, ignoring the aspect ratio.
    case fill
    /// Keep the aspect ratio and fit inside the size: the result is as large as possible without
    /// exceeding it, so one side may be shorter. (SDWebImage pads to the size with transparency;
    /// here nothing is padded, as in Nuke, Pillow's `thumbnail` and `vipsthumbnail`.)
    case aspectFit = "aspectfit"
    /// Keep the aspect ratio and cover the size, cutting off what overflows, centred: the result
    /// is exactly the size.
    case aspectFill = "aspectfill"
}
