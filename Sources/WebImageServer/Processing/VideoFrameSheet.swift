import WebImage

/// What a ``VideoFrameLayout`` does with a video's frames: each one reshaped as it is decoded
/// (upright, fitted or filled to the box, extended with black), then laid out as a tile sheet or
/// timed as an animation.
extension VideoFrameLayout {
    /// `frame` upright and reshaped to the layout's box: fitted inside it (never enlarged), or
    /// filling it around the focus, then extended to it with black when asked.
    func shape(_ frame: Image) throws(WebImageError) -> Image {
        var image = try Self.apply(OrientationTransformer(), to: frame)
        if fill, width > 0, height > 0 {
            let scale = max(Double(width) / Double(image.pixelWidth), Double(height) / Double(image.pixelHeight))
            let (scaledWidth, scaledHeight) = (
                max(width, Int((Double(image.pixelWidth) * scale).rounded())),
                max(height, Int((Double(image.pixelHeight) * scale).rounded()))
            )
            image = try Self.apply(ResizingTransformer(width: scaledWidth, height: scaledHeight, mode: .fill), to: image)
            let x = min(max(0, Int((focusX * Double(scaledWidth)).rounded()) - width / 2), scaledWidth - width)
            let y = min(max(0, Int((focusY * Double(scaledHeight)).rounded()) - height / 2), scaledHeight - height)
            image = try Self.apply(CroppingTransformer(x: x, y: y, width: width, height: height), to: image)
        } else {
            let scale = min(
                width > 0 ? Double(width) / Double(image.pixelWidth) : 1, height > 0 ? Double(height) / Double(image.pixelHeight) : 1, 1)
            if scale < 1 {
                let (fittedWidth, fittedHeight) = (
                    max(1, Int((Double(image.pixelWidth) * scale).rounded())), max(1, Int((Double(image.pixelHeight) * scale).rounded()))
                )
                image = try Self.apply(ResizingTransformer(width: fittedWidth, height: fittedHeight, mode: .fill), to: image)
            }
        }
        if extend, width > 0, height > 0, image.pixelWidth < width || image.pixelHeight < height {
            let canvas = CanvasTransformer(
                width: width, height: height, x: (width - image.pixelWidth) / 2, y: (height - image.pixelHeight) / 2, color: .black)
            image = try Self.apply(canvas, to: image)
        }
        return image
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
        var bytes = [UInt8](repeating: 0, count: sheetWidth * sheetHeight * 4)
        for index in stride(from: 3, to: bytes.count, by: 4) { bytes[index] = 255 }
        for (index, frame) in frames.enumerated() where index < usedColumns * usedRows {
            let (left, top) = ((index % columns) * tileWidth, (index / columns) * tileHeight)
            let rowBytes = tileWidth * 4
            for row in 0..<tileHeight {
                let source = row * frame.pixels.bytesPerRow
                let target = ((top + row) * sheetWidth + left) * 4
                bytes.replaceSubrange(target..<target + rowBytes, with: frame.pixels.bytes[source..<source + rowBytes])
            }
        }
        return PixelBuffer(width: sheetWidth, height: sheetHeight, straightRGBA: bytes)
    }

    private static func apply(_ transformer: any ImageTransformer, to image: Image) throws(WebImageError) -> Image {
        guard let result = transformer.transform(image, forKey: "") else {
            throw WebImageError(
                .transformFailed, "\(transformer.transformerKey) cannot apply to a \(image.pixelWidth)x\(image.pixelHeight) frame")
        }
        return result
    }
}
