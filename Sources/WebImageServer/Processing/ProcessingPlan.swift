import WebImage

/// The sizes a request's options give for one source, worked out from the source's upright size
/// before a pixel is decoded (imgproxy's arithmetic): the crop before resizing, the size to
/// resize to (which the decoder reaches by its own scaling where it can), the crop that `fill`
/// makes, and the canvas that `extend` and `padding` add. A pure value, tested without images.
struct ProcessingPlan: Equatable {
    /// A rectangle cut from a larger one.
    struct Cut: Equatable {
        var width: Int
        var height: Int
        var gravity: Gravity
    }

    /// The crop before resizing (`crop`), in the upright source's pixels.
    var crop: Cut?
    /// The size after resizing.
    var scaledWidth: Int
    var scaledHeight: Int
    /// Whether resizing scales both sides by one factor (every type but `force`, without a
    /// lopsided zoom).
    var keepsAspectRatio: Bool
    /// The crop after resizing (`fill`, `fill-down`).
    var fill: Cut?
    /// The canvas `extend` grows to, with where the image sits on it.
    var extended: Cut?

    /// The plan for an upright `sourceWidth` x `sourceHeight` image.
    init(options: ProcessingOptions, sourceWidth: Int, sourceHeight: Int) {
        var width = sourceWidth
        var height = sourceHeight
        if let crop = options.crop {
            width = Self.cropSide(crop.width, of: sourceWidth)
            height = Self.cropSide(crop.height, of: sourceHeight)
            self.crop = Cut(width: width, height: height, gravity: crop.gravity ?? options.gravity)
        }
        let boxWidth = Int((Double(options.width) * options.dpr * options.zoomX).rounded())
        let boxHeight = Int((Double(options.height) * options.dpr * options.zoomY).rounded())
        let type = Self.effectiveType(options.resizingType, width: width, height: height, boxWidth: boxWidth, boxHeight: boxHeight)
        var (scaleX, scaleY) = Self.scales(type, width: width, height: height, boxWidth: boxWidth, boxHeight: boxHeight, options: options)
        if !options.enlarge {
            scaleX = min(scaleX, 1)
            scaleY = min(scaleY, 1)
        }
        let minimumWidth = Double(options.minWidth) * options.dpr
        let minimumHeight = Double(options.minHeight) * options.dpr
        if minimumWidth > Double(width) * scaleX {
            let grown = minimumWidth / Double(width)
            if type != .force { scaleY *= grown / scaleX }
            scaleX = grown
        }
        if minimumHeight > Double(height) * scaleY {
            let grown = minimumHeight / Double(height)
            if type != .force { scaleX *= grown / scaleY }
            scaleY = grown
        }
        keepsAspectRatio = scaleX == scaleY
        scaledWidth = max(1, Int((Double(width) * scaleX).rounded()))
        scaledHeight = max(1, Int((Double(height) * scaleY).rounded()))
        fill = Self.fillCut(
            type, scaledWidth: scaledWidth, scaledHeight: scaledHeight, boxWidth: boxWidth, boxHeight: boxHeight, gravity: options.gravity)
        let resultWidth = fill?.width ?? scaledWidth
        let resultHeight = fill?.height ?? scaledHeight
        if options.extend, boxWidth > resultWidth || boxHeight > resultHeight {
            extended = Cut(width: max(boxWidth, resultWidth), height: max(boxHeight, resultHeight), gravity: options.extendGravity)
        }
    }

    /// `auto` decided: fill when the image and the box have the same orientation, else fit.
    private static func effectiveType(
        _ type: ProcessingOptions.ResizingType, width: Int, height: Int, boxWidth: Int, boxHeight: Int
    ) -> ProcessingOptions.ResizingType {
        guard type == .auto else { return type }
        guard boxWidth > 0, boxHeight > 0 else { return .fit }
        return (width >= height) == (boxWidth >= boxHeight) ? .fill : .fit
    }

    private static func scales(
        _ type: ProcessingOptions.ResizingType, width: Int, height: Int, boxWidth: Int, boxHeight: Int, options: ProcessingOptions
    ) -> (Double, Double) {
        guard boxWidth > 0 || boxHeight > 0 else { return (options.zoomX, options.zoomY) }
        let scaleX = boxWidth > 0 ? Double(boxWidth) / Double(width) : nil
        let scaleY = boxHeight > 0 ? Double(boxHeight) / Double(height) : nil
        switch type {
        case .force:
            return (scaleX ?? scaleY!, scaleY ?? scaleX!)
        case .fill, .fillDown:
            let scale = max(scaleX ?? 0, scaleY ?? 0)
            return (scale, scale)
        case .fit, .auto:
            let scale = min(scaleX ?? .infinity, scaleY ?? .infinity)
            return (scale, scale)
        }
    }

    /// `fill` cuts the scaled image to the box; `fill-down`, when the image came out smaller
    /// than the box, cuts it to the box's aspect ratio instead.
    private static func fillCut(
        _ type: ProcessingOptions.ResizingType, scaledWidth: Int, scaledHeight: Int, boxWidth: Int, boxHeight: Int, gravity: Gravity
    ) -> Cut? {
        guard type == .fill || type == .fillDown, boxWidth > 0, boxHeight > 0 else { return nil }
        var width = min(boxWidth, scaledWidth)
        var height = min(boxHeight, scaledHeight)
        if type == .fillDown, scaledWidth < boxWidth || scaledHeight < boxHeight {
            let ratio = Double(boxWidth) / Double(boxHeight)
            if Double(scaledWidth) / Double(scaledHeight) > ratio {
                width = max(1, Int((Double(scaledHeight) * ratio).rounded()))
                height = scaledHeight
            } else {
                width = scaledWidth
                height = max(1, Int((Double(scaledWidth) / ratio).rounded()))
            }
        }
        guard width < scaledWidth || height < scaledHeight else { return nil }
        return Cut(width: width, height: height, gravity: gravity)
    }

    /// A crop side: 0 is the whole side, below 1 a fraction of it, else pixels (at most the side).
    private static func cropSide(_ value: Double, of side: Int) -> Int {
        if value == 0 { return side }
        if value < 1 { return max(1, Int((value * Double(side)).rounded())) }
        return min(side, Int(value.rounded()))
    }

    /// The transformers that carry the plan out on an image already upright, rotated and
    /// flipped, decoded at `decodedWidth` x `decodedHeight` (smaller than the source when the
    /// decoder scaled it), followed by the filters and padding of `options`.
    func transformers(options: ProcessingOptions, decodedWidth: Int, decodedHeight: Int, sourceWidth: Int) -> [any ImageTransformer] {
        var steps: [any ImageTransformer] = []
        var width = decodedWidth
        var height = decodedHeight
        if let crop {
            // The crop was planned on the source; the decoder may have scaled it already.
            let factor = Double(decodedWidth) / Double(sourceWidth)
            let cropWidth = max(1, min(width, Int((Double(crop.width) * factor).rounded())))
            let cropHeight = max(1, min(height, Int((Double(crop.height) * factor).rounded())))
            steps.append(Self.cut(Cut(width: cropWidth, height: cropHeight, gravity: crop.gravity), outerWidth: width, outerHeight: height))
            (width, height) = (cropWidth, cropHeight)
        }
        if width != scaledWidth || height != scaledHeight {
            if crop == nil, keepsAspectRatio, decodedWidth < sourceWidth, 0...1 ~= width - scaledWidth, 0...1 ~= height - scaledHeight {
                // The decoder scaled by the planned factor and rounded a side up: 2048x1365 by
                // DCT quarters is 512x342 where the plan says 341, the last row covering a
                // quarter of a source row. Dropping that row keeps the scale exact; resampling
                // 342 rows to 341 would blur every row and took 15% of such a request's time.
                steps.append(CroppingTransformer(x: 0, y: 0, width: scaledWidth, height: scaledHeight))
            } else {
                steps.append(ResizingTransformer(width: scaledWidth, height: scaledHeight, mode: .fill, filter: .lanczos3))
            }
            (width, height) = (scaledWidth, scaledHeight)
        }
        if let fill {
            steps.append(Self.cut(fill, outerWidth: width, outerHeight: height))
            (width, height) = (fill.width, fill.height)
        }
        if options.blur > 0 { steps.append(BlurTransformer(radius: options.blur)) }
        if options.sharpen > 0 { steps.append(SharpeningTransformer(sigma: options.sharpen)) }
        if options.pixelate > 1 { steps.append(PixelatingTransformer(blockSize: Int((Double(options.pixelate) * options.dpr).rounded()))) }
        let canvasColor = options.background ?? .clear
        if let extended {
            let origin = extended.gravity.origin(width: width, height: height, outerWidth: extended.width, outerHeight: extended.height)
            steps.append(CanvasTransformer(width: extended.width, height: extended.height, x: origin.x, y: origin.y, color: canvasColor))
            (width, height) = (extended.width, extended.height)
        }
        if let padding = options.padding {
            let scale = { (side: Int) in Int((Double(side) * options.dpr).rounded()) }
            steps.append(
                CanvasTransformer(
                    width: width + scale(padding.left) + scale(padding.right), height: height + scale(padding.top) + scale(padding.bottom),
                    x: scale(padding.left), y: scale(padding.top), color: canvasColor))
        }
        return steps
    }

    /// A cut of `outerWidth` x `outerHeight` by its gravity: the smart crop, or a plain crop
    /// where the gravity puts it.
    private static func cut(_ cut: Cut, outerWidth: Int, outerHeight: Int) -> any ImageTransformer {
        if cut.gravity.kind == .smart { return SmartCroppingTransformer(width: cut.width, height: cut.height) }
        let origin = cut.gravity.origin(width: cut.width, height: cut.height, outerWidth: outerWidth, outerHeight: outerHeight)
        return CroppingTransformer(x: origin.x, y: origin.y, width: cut.width, height: cut.height)
    }
}
