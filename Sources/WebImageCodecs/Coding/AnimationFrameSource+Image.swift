extension AnimationFrameSource {
    /// Every frame (or only the first, with ``DecodeOptions/firstFrameOnly``, or the first
    /// ``DecodeOptions/maximumFrames``) as one ``Image``.
    /// The frames held together must fit the pixel budget: of a longer animation the first frames
    /// that fit are kept, with a warning, as imgproxy keeps the first frames rather than refusing
    /// (a long animation is a valid file, and a refusal put its URL on the failed list for good);
    /// only a single frame over the budget is `WebImageError.Code.tooLarge`.
    mutating func image(options: DecodeOptions, inputSize: Int, format: ImageFormat) throws(WebImageError) -> Image {
        let all = options.firstFrameOnly ? 1 : durations.count
        try options.limits.check(width: canvasWidth, height: canvasHeight, inputSize: inputSize)
        let (canvasPixels, overflow) = canvasWidth.multipliedReportingOverflow(by: canvasHeight)
        // A 16-bit frame takes the memory of two 8-bit ones.
        let framePixels = holdsHighBitDepth ? canvasPixels.multipliedReportingOverflow(by: 2).partialValue : canvasPixels
        let fitting = overflow || framePixels <= 0 ? 1 : max(1, options.limits.maximumPixelCount / framePixels)
        let allowed = max(1, options.maximumFrames ?? all)
        let count = min(all, fitting, allowed)
        var warnings = self.warnings
        if count < all {
            warnings.append(
                count == allowed
                    ? "kept the first \(count) of \(all) frames: the frame limit"
                    : "kept the first \(count) of \(all) frames: together they are over the \(options.limits.maximumPixelCount)-pixel limit"
            )
        }
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
        image.sourceColor = sourceColor
        return image
    }
}
