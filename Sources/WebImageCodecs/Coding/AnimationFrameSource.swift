/// What a format gives ``AnimatedImageDecoder``: its frames' durations up front, and composed
/// frames one after another from the start. Only the decoder calls it, under its lock.
protocol AnimationFrameSource {
    var canvasWidth: Int { get }
    var canvasHeight: Int { get }
    var loopCount: Int { get }
    var durations: [Duration] { get }
    /// Starts again from the first frame.
    mutating func rewind() throws(WebImageError)
    /// The next frame, composed.
    mutating func next() throws(WebImageError) -> PixelBuffer
}
