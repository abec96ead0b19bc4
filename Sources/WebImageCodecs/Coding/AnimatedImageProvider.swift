/// An animation decoded on demand (SDWebImage's `SDAnimatedImageProvider`), made by an
/// ``AnimatedImageCoder``: the frame count, loop count and durations come from the file's headers;
/// a frame's pixels are composed only when asked for.
/// `CodersManager.animatedImageProvider(for:options:)` makes one for GIF, APNG and WebP.
public protocol AnimatedImageProvider: AnyObject, Sendable {
    /// How many frames the animation has.
    var frameCount: Int { get }
    /// How many times it plays; 0 means forever.
    var loopCount: Int { get }
    /// How long frame `index` shows (SDWebImage's rule: under 11 ms counts as 100 ms).
    func duration(at index: Int) -> Duration
    /// Frame `index`, composed on the canvas, as straight RGBA.
    func frame(at index: Int) throws(WebImageError) -> PixelBuffer
}
