extension AnimationFrameSource {
    /// Every frame (or only the first, with ``DecodeOptions/firstFrameOnly``) as one ``Image``,
    /// after checking that all of them together fit the pixel budget.
    mutating func image(options: DecodeOptions, inputSize: Int, format: ImageFormat) throws(WebImageError) -> Image {
        let count = options.firstFrameOnly ? 1 : durations.count
        try options.limits.check(width: canvasWidth, height: canvasHeight * count, inputSize: inputSize)
        var frames: [ImageFrame] = []
        frames.reserveCapacity(count)
        for index in 0..<count {
            frames.append(ImageFrame(pixels: try next(), duration: durations[index]))
        }
        var image = Image(
            frames: frames, loopCount: loopCount, scale: options.scale, sourceFormat: format,
            hasAlpha: frames.contains { !$0.pixels.isOpaque })
        image.warnings = warnings
        image.isPartial = isPartial
        return image
    }
}
