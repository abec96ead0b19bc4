extension Image {
    /// The image with `body` applied to the pixels of every frame, keeping durations, loop count,
    /// scale and format; nil when `body` gives nil for any frame.
    func mappingFrames(_ body: (PixelBuffer) -> PixelBuffer?) -> Image? {
        var frames: [ImageFrame] = []
        frames.reserveCapacity(self.frames.count)
        for frame in self.frames {
            guard let pixels = body(frame.pixels) else { return nil }
            frames.append(ImageFrame(pixels: pixels, duration: frame.duration))
        }
        var image = self
        image.frames = frames
        image.hasAlpha = hasAlpha || frames.contains { !$0.pixels.isOpaque }
        return image
    }
}
