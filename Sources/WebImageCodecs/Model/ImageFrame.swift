/// One frame of an image: its pixels and, in an animation, how long it shows.
public struct ImageFrame: Sendable, Equatable {
    /// The frame's pixels, straight RGBA.
    public var pixels: PixelBuffer
    /// How long the frame shows; zero for a still image.
    public var duration: Duration

    /// Creates a frame.
    public init(pixels: PixelBuffer, duration: Duration = .zero) {
        self.pixels = pixels
        self.duration = duration
    }
}
