extension Image {
    /// The image with `body` applied to the pixels of every frame, keeping durations, loop count,
    /// scale and format; nil when `body` gives nil for any frame. A 16-bit image is reduced to 8
    /// bits first (``reducedToEightBits()``) unless `keepingHighBitDepth` says `body` handles
    /// 16-bit pixels, so no transform reads samples it does not know the size of.
    func mappingFrames(keepingHighBitDepth: Bool = false, _ body: (PixelBuffer) -> PixelBuffer?) -> Image? {
        let source = keepingHighBitDepth ? self : reducedToEightBits()
        var frames: [ImageFrame] = []
        frames.reserveCapacity(source.frames.count)
        for frame in source.frames {
            guard let pixels = body(frame.pixels) else { return nil }
            frames.append(ImageFrame(pixels: pixels, duration: frame.duration))
        }
        var image = source
        image.frames = frames
        image.hasAlpha = hasAlpha || frames.contains { !$0.pixels.isOpaque }
        return image
    }
}
