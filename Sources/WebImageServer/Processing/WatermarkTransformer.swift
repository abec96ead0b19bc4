import WebImage

/// Lays the configured watermark over a result, as imgproxy's `processing/watermark.go` does:
/// scaled to fit a share of the result when `wm` gives a scale (enlarging too), placed by a
/// compass gravity with offsets (``Gravity``'s placement with overflow: part of it may lie
/// outside), or tiled over the whole result from the centre with the
/// offsets as the space between tiles (`re`), then blended over with its alpha times the
/// opacity. Every frame of an animation gets the same mark.
struct WatermarkTransformer: ImageTransformer {
    /// The watermark, decoded (its first frame is used).
    var mark: Image
    /// The URL's `wm` options.
    var options: ProcessingOptions.Watermark
    /// The URL's opacity times the server's (`IMGPROXY_WATERMARK_OPACITY`), 0...1.
    var opacity: Double
    /// What pixel offsets are multiplied by: the result's `dpr` scale.
    var offsetScale: Double
    /// The most pixels the scaled mark may have: the result's own limit (`wms` can ask for any size).
    var maximumPixels: Int

    var transformerKey: String { "watermark" }

    func transform(_ image: Image, forKey key: String) -> Image? {
        // The mark is 8-bit sRGB: laid over 16-bit samples of a transfer like sRGB's at 16 bits,
        // over PQ or HLG ones after they are tone-mapped to 8 bits.
        let image = image.sourceColor?.isHDR == true ? image.reducedToEightBits() : image
        guard let first = mark.frames.first.map({ $0.pixels.reducedToEightBits(describedBy: mark.sourceColor) }) else { return image }
        // Every frame has the result's size: the mark is prepared once, nil when over the limit.
        guard let prepared = scaled(first, toShareOf: image.pixelWidth, image.pixelHeight).map(shadowed) else { return nil }
        // Blending over can only make pixels more opaque: the image's alpha flag stays right.
        var marked = image
        marked.frames = image.frames.map { frame in
            ImageFrame(pixels: laid(prepared, over: frame.pixels), duration: frame.duration)
        }
        return marked
    }

    /// One frame with the prepared mark laid over it.
    private func laid(_ prepared: PixelBuffer, over pixels: PixelBuffer) -> PixelBuffer {
        if options.replicate {
            let tile = padded(prepared, width: pixels.width, height: pixels.height)
            return Self.blend(tiled(tile, width: pixels.width, height: pixels.height), over: pixels, x: 0, y: 0, opacity: opacity)
        }
        let (x, y) = position(
            outerWidth: pixels.width, outerHeight: pixels.height, innerWidth: prepared.width, innerHeight: prepared.height)
        return Self.blend(prepared, over: pixels, x: x, y: y, opacity: opacity)
    }

    /// The mark fitted (enlarging too) in `scale` of the result's size, each side rounded half to
    /// even as imgproxy's `ScaleToEven`; as it is without a scale; nil when that is over
    /// ``maximumPixels``.
    private func scaled(_ pixels: PixelBuffer, toShareOf width: Int, _ height: Int) -> PixelBuffer? {
        let turned = rotated(pixels)
        let factor: Double
        if let scale = options.scale, scale > 0 {
            let boxWidth = max(Gravity.scaleToEven(width, scale), 1)
            let boxHeight = max(Gravity.scaleToEven(height, scale), 1)
            factor = min(Double(boxWidth) / Double(turned.width), Double(boxHeight) / Double(turned.height))
        } else if let size = options.size {
            // `wms`: fit, enlarging too; a 0 side follows the other.
            let byWidth = size.width > 0 ? Double(size.width) / Double(turned.width) : .infinity
            let byHeight = size.height > 0 ? Double(size.height) / Double(turned.height) : .infinity
            factor = min(byWidth, byHeight)
        } else {
            return turned
        }
        guard (Double(turned.width) * factor).rounded() * (Double(turned.height) * factor).rounded() <= Double(maximumPixels) else {
            return nil
        }
        return turned.resized(by: factor)
    }

    /// `wmsh` (paid edition): the mark over a black shadow of its own shape blurred by the sigma,
    /// its canvas grown by three sigmas a side to hold the shadow (so the mark keeps its place
    /// within it).
    private func shadowed(_ pixels: PixelBuffer) -> PixelBuffer {
        guard options.shadow > 0 else { return pixels }
        let margin = Int((3 * options.shadow).rounded(.up))
        let (width, height) = (pixels.width + 2 * margin, pixels.height + 2 * margin)
        var shape = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<pixels.height {
            for x in 0..<pixels.width {
                shape[((y + margin) * width + x + margin) * 4 + 3] = pixels.bytes[(y * pixels.width + x) * 4 + 3]
            }
        }
        let shadow = BlurTransformer(radius: options.shadow).transform(
            Image(pixels: PixelBuffer(width: width, height: height, straightRGBA: shape)), forKey: "")?.frames.first?.pixels
        return Self.blend(
            pixels, over: shadow ?? PixelBuffer(width: width, height: height, straightRGBA: shape), x: margin, y: margin, opacity: 1)
    }

    /// `wmr`: the mark turned clockwise, its canvas grown to hold it.
    private func rotated(_ pixels: PixelBuffer) -> PixelBuffer {
        guard options.rotation.truncatingRemainder(dividingBy: 360) != 0 else { return pixels }
        return RotationTransformer(degrees: -options.rotation).transform(Image(pixels: pixels), forKey: "")?.frames.first?.pixels ?? pixels
    }

    /// For tiling: transparent space around the mark, the offsets (pixels times the dpr scale, or
    /// shares of the result below 1) split between the two sides.
    private func padded(_ pixels: PixelBuffer, width: Int, height: Int) -> PixelBuffer {
        let padX = max(0, offset(options.x, of: width))
        let padY = max(0, offset(options.y, of: height))
        guard padX > 0 || padY > 0 else { return pixels }
        let canvas = CanvasTransformer(
            width: pixels.width + padX, height: pixels.height + padY, x: padX / 2, y: padY / 2, color: .clear)
        return canvas.transform(Image(pixels: pixels), forKey: "")?.frames.first?.pixels ?? pixels
    }

    /// A `width` x `height` layer of `tile` repeated, an odd number of tiles each way with the
    /// middle one centred (libvips' `replicate` then the centred cut of imgproxy's
    /// `vips_replicate_go`).
    private func tiled(_ tile: PixelBuffer, width: Int, height: Int) -> PixelBuffer {
        func oddCount(_ length: Int, _ side: Int) -> Int {
            let count = (length + side - 1) / side
            return count.isMultiple(of: 2) ? count + 1 : count
        }
        let left = (oddCount(width, tile.width) * tile.width - width) / 2
        let top = (oddCount(height, tile.height) * tile.height - height) / 2
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        let source = tile.bytes
        for y in 0..<height {
            let sourceRow = ((y + top) % tile.height) * tile.width
            for x in 0..<width {
                let from = (sourceRow + (x + left) % tile.width) * 4
                let to = (y * width + x) * 4
                for channel in 0..<4 { bytes[to + channel] = source[from + channel] }
            }
        }
        return PixelBuffer(width: width, height: height, straightRGBA: bytes)
    }

    /// An offset as ``Gravity/offset(_:of:dpr:)`` reads it, with the dpr scale.
    private func offset(_ value: Double, of side: Int) -> Int {
        Gravity.offset(value, of: side, dpr: offsetScale)
    }

    /// Where the mark's top-left corner goes: ``Gravity/origin(width:height:outerWidth:outerHeight:dpr:allowsOverflow:)``
    /// with overflow allowed, as imgproxy places a watermark.
    func position(outerWidth: Int, outerHeight: Int, innerWidth: Int, innerHeight: Int) -> (x: Int, y: Int) {
        Gravity(options.position, x: options.x, y: options.y).origin(
            width: innerWidth, height: innerHeight, outerWidth: outerWidth, outerHeight: outerHeight, dpr: offsetScale, allowsOverflow: true
        )
    }

    /// The 8-bit `mark` blended over `base` (8 or 16 bits a sample, kept) with its top-left
    /// corner at (`x`, `y`), its alpha times `opacity` (libvips' `composite2` OVER on straight
    /// colours).
    static func blend(_ mark: PixelBuffer, over base: PixelBuffer, x: Int, y: Int, opacity: Double) -> PixelBuffer {
        let columns = max(0, x)..<min(base.width, x + mark.width)
        let rows = max(0, y)..<min(base.height, y + mark.height)
        guard !columns.isEmpty, !rows.isEmpty else { return base }
        var bytes = base.bytes
        bytes.withUnsafeMutableBytes { raw in
            let area = (mark: mark, x: x, y: y, columns: columns, rows: rows, width: base.width)
            if base.isHighBitDepth {
                blend(area, into: raw.bindMemory(to: UInt16.self), opacity: opacity)
            } else {
                blend(area, into: raw.bindMemory(to: UInt8.self), opacity: opacity)
            }
        }
        return PixelBuffer(width: base.width, height: base.height, bitsPerSample: base.bitsPerSample, bytes: bytes)
    }

    /// ``blend(_:over:x:y:opacity:)`` into `samples` of the base, the mark's 8-bit values on
    /// their scale (times 257 at 16 bits).
    private static func blend<Sample: FixedWidthInteger & UnsignedInteger>(
        _ area: (mark: PixelBuffer, x: Int, y: Int, columns: Range<Int>, rows: Range<Int>, width: Int),
        into samples: UnsafeMutableBufferPointer<Sample>, opacity: Double
    ) {
        let source = area.mark.bytes
        let maximum = Double(Sample.max)
        let scale = maximum / 255
        for row in area.rows {
            for column in area.columns {
                let from = ((row - area.y) * area.mark.width + (column - area.x)) * 4
                let to = (row * area.width + column) * 4
                let markAlpha = Double(source[from + 3]) / 255 * opacity
                guard markAlpha > 0 else { continue }
                let baseAlpha = Double(samples[to + 3]) / maximum
                let alpha = markAlpha + baseAlpha * (1 - markAlpha)
                for channel in 0..<3 {
                    let value =
                        (Double(source[from + channel]) * scale * markAlpha + Double(samples[to + channel]) * baseAlpha * (1 - markAlpha))
                        / alpha
                    samples[to + channel] = Sample(min(maximum, max(0, value.rounded())))
                }
                samples[to + 3] = Sample(min(maximum, max(0, (alpha * maximum).rounded())))
            }
        }
    }
}
