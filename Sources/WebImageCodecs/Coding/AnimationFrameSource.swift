/// What a format gives ``AnimatedImageDecoder``: its frames' durations up front, and composed
/// frames one after another from the start. Only the decoder calls it, under its lock.
protocol AnimationFrameSource {
    var canvasWidth: Int { get }
    var canvasHeight: Int { get }
    var loopCount: Int { get }
    var durations: [Duration] { get }
    /// What reading the file worked around (``Image/warnings``).
    var warnings: [String] { get }
    /// Whether the data ended inside a frame and only part of it was read (``Image/isPartial``).
    var isPartial: Bool { get }
    /// The file's colour description (``Image/sourceColor``), when the format gives one.
    var sourceColor: ColorDescription? { get }
    /// Whether the frames come as 16-bit pixels: each is charged twice its pixels when frames
    /// are held together.
    var holdsHighBitDepth: Bool { get }
    /// Starts again from the first frame.
    mutating func rewind() throws(WebImageError)
    /// The next frame, composed.
    mutating func next() throws(WebImageError) -> PixelBuffer
}

extension AnimationFrameSource {
    var warnings: [String] { [] }
    var isPartial: Bool { false }
    var sourceColor: ColorDescription? { nil }
    var holdsHighBitDepth: Bool { false }
}
