import WebImage

/// What a ``VideoFrameLayout`` does with a video's frames: each one reshaped as it is decoded
/// (upright, fitted or filled to the box, extended with black), then laid out as a tile sheet or
/// timed as an animation.
extension VideoFrameLayout {
    /// `frame` upright and reshaped to the layout's box as imgproxy resizes an image (the same
    /// ``ProcessingPlan``): `fit` inside it, never enlarged, or `fill` it around the focus point
    /// (enlarged when smaller), then `extend`ed to it on black when asked.
    func shape(_ frame: Image) throws(WebImageError) -> Image {
        var image = try Self.apply(OrientationTransformer(), to: frame)
        let options = resizing
        let plan: ProcessingPlan
        do {
            plan = try ProcessingPlan(options: options, sourceWidth: image.pixelWidth, sourceHeight: image.pixelHeight)
        } catch {
            throw WebImageError(.transformFailed, error.reason)
        }
        let steps = plan.transformers(
            options: options, decodedWidth: image.pixelWidth, decodedHeight: image.pixelHeight, sourceWidth: image.pixelWidth)
        for step in steps { image = try Self.apply(step, to: image) }
        return image
    }

    /// The processing options of one frame's reshaping: the box, the resizing type, the focus
    /// point and the black extension.
    private var resizing: ProcessingOptions {
        var options = ProcessingOptions()
        (options.width, options.height) = (width, height)
        options.resizingType = fill ? .fill : .fit
        options.enlarge = fill
        options.gravity = Gravity(.focusPoint, x: focusX, y: focusY)
        options.extend = extend
        options.background = .black
        return options
    }

    /// The decoded frames (fewer than asked when the video ended first) as the layout's result:
    /// the tile sheet, or the animation of at most `maximumFrames`, each frame lasting the delay.
    /// - Throws: 422 for a sheet over `maximumPixels`.
    func arrange(_ decoded: Image, maximumPixels: Int, maximumFrames: Int) throws(ProxyError) -> Image {
        switch kind {
        case .tiles(let columns, let rows):
            var sheet = Image(
                pixels: try tileSheet(decoded.frames, columns: columns, rows: rows, maximumPixels: maximumPixels), hasAlpha: false)
            sheet.sourceFormat = decoded.sourceFormat
            return sheet
        case .animation(let count, let delay):
            var animation = decoded
            var frames = decoded.frames.map { ImageFrame(pixels: $0.pixels, duration: .milliseconds(delay)) }
            // Without trim the animation keeps its length, holding on the video's last frame.
            if !trim, let last = frames.last { frames += Array(repeating: last, count: max(0, min(count, maximumFrames) - frames.count)) }
            animation.frames = frames
            return animation
        }
    }

    /// The frames laid out row by row on black, each in a tile of the first frame's size; with
    /// trim, the rows and columns no frame reached are left out.
    private func tileSheet(_ frames: [ImageFrame], columns: Int, rows: Int, maximumPixels: Int) throws(ProxyError) -> PixelBuffer {
        let (tileWidth, tileHeight) = (frames[0].pixels.width, frames[0].pixels.height)
        let (usedColumns, usedRows) = trim ? (min(columns, frames.count), (frames.count + columns - 1) / columns) : (columns, rows)
        let (sheetWidth, sheetHeight) = (usedColumns * tileWidth, usedRows * tileHeight)
        guard sheetWidth * sheetHeight <= maximumPixels else {
            throw .unprocessable("a \(sheetWidth)x\(sheetHeight) tile sheet is over the limit of \(maximumPixels) pixels")
        }
        var sheet = RGBACanvas(width: sheetWidth, height: sheetHeight, color: .black)
        for (index, frame) in frames.enumerated() where index < usedColumns * usedRows {
            sheet.draw(frame.pixels, left: (index % columns) * tileWidth, top: (index / columns) * tileHeight)
        }
        return sheet.pixels
    }

    private static func apply(_ transformer: any ImageTransformer, to image: Image) throws(WebImageError) -> Image {
        guard let result = transformer.transform(image, forKey: "") else {
            throw WebImageError(
                .transformFailed, "\(transformer.transformerKey) cannot apply to a \(image.pixelWidth)x\(image.pixelHeight) frame")
        }
        return result
    }
}
