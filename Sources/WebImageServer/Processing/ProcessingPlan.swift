import WebImage

/// The sizes a request's options give for one source, worked out from the source's upright size
/// before a pixel is decoded (imgproxy's arithmetic): the crop before resizing, the size to
/// resize to (which the decoder reaches by its own scaling where it can), the crop that `fill`
/// makes, and the canvas that `extend` and `padding` add. A pure value, tested without images.
///
/// Every size the plan leads to is known here, so the limits are kept here: a result whose
/// width or height (after `extend` and `padding`) is over the dimension limit, or whose pixels
/// are over the pixel limit, is scaled down as a whole until it fits, as imgproxy's
/// `limitScale` does (`z:100` on a 200x200 source gives an 8192x8192 result, not 20000x20000),
/// and the one intermediate that can be larger than the result, the scaled image a `fill` cuts
/// from, is never made whole: the resize computes only the part the cut keeps (a smart crop,
/// which must see the whole, is refused over the pixel limit instead).
struct ProcessingPlan: Equatable {
    /// A rectangle cut from a larger one.
    struct Cut: Equatable {
        var width: Int
        var height: Int
        var gravity: Gravity
    }

    /// The bounds every result is kept within.
    struct Limits: Equatable {
        /// The largest width or height of a result.
        var maximumDimension: Int
        /// The most pixels of a result, and of anything made on the way to it.
        var maximumPixels: Int

        /// imgproxy's dimension limit and a pixel limit of its square.
        init(maximumDimension: Int = 8192, maximumPixels: Int? = nil) {
            self.maximumDimension = maximumDimension
            self.maximumPixels = maximumPixels ?? maximumDimension * maximumDimension
        }
    }

    /// The crop before resizing (`crop`), in the upright source's pixels.
    var crop: Cut?
    /// The size after resizing.
    var scaledWidth: Int
    var scaledHeight: Int
    /// Whether resizing scales both sides by one factor (every type but `force`, without a
    /// lopsided zoom).
    var keepsAspectRatio: Bool
    /// Whether the resize makes the (cropped) image smaller on a side: when `unsharp_masking`'s
    /// `auto` mode sharpens.
    var isDownscaled: Bool
    /// The crop after resizing (`fill`, `fill-down`).
    var fill: Cut?
    /// The canvas `extend` grows to, with where the image sits on it.
    var extended: Cut?
    /// The canvas `extend_aspect_ratio` grows to after that, with where the image sits on it.
    var aspectExtended: Cut?
    /// What the plan was scaled by to keep the result within the limits: 1 when it fits as
    /// asked. `dpr`-scaled sizes (padding, pixelation) are multiplied by it too.
    var limitScale: Double
    /// What sizes given in CSS pixels are multiplied by (padding, gravity offsets, pixelation):
    /// the `dpr`, lowered where the image cannot reach the box without enlarging, times
    /// ``limitScale`` (imgproxy's `DprScale`).
    var dprScale: Double
    /// The result's size, after `extend` and `padding`.
    var resultWidth: Int
    var resultHeight: Int

    /// The plan for an upright `sourceWidth` x `sourceHeight` image, within `limits`.
    /// - Throws: 422 when a smart `fill` would have to see a scaled image over the pixel limit,
    ///   or when no scale keeps the result within the limits (padding alone over them).
    init(options: ProcessingOptions, sourceWidth: Int, sourceHeight: Int, limits: Limits = Limits()) throws(ProxyError) {
        let base = Scaling(options: options, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        var plan = Self(base, options: options, limitScale: 1)
        // Rounding can leave a side a pixel over after the first scaling down; the next pass
        // starts from a scale a little smaller.
        for _ in 0..<4 {
            let overDimension = Double(limits.maximumDimension) / Double(max(plan.resultWidth, plan.resultHeight))
            let overPixels = (Double(limits.maximumPixels) / (Double(plan.resultWidth) * Double(plan.resultHeight))).squareRoot()
            let needed = min(overDimension, overPixels)
            guard needed < 1 else { break }
            plan = Self(base, options: options, limitScale: plan.limitScale * needed * (plan.limitScale < 1 ? 0.999 : 1))
        }
        guard plan.resultWidth <= limits.maximumDimension, plan.resultHeight <= limits.maximumDimension,
            Double(plan.resultWidth) * Double(plan.resultHeight) <= Double(limits.maximumPixels)
        else {
            throw .unprocessable(
                "the result would be \(plan.resultWidth)x\(plan.resultHeight), over the limit of \(limits.maximumDimension) pixels a side "
                    + "and \(limits.maximumPixels) pixels")
        }
        if plan.fill?.gravity.kind == .smart, Double(plan.scaledWidth) * Double(plan.scaledHeight) > Double(limits.maximumPixels) {
            throw .unprocessable(
                "a smart crop from a \(plan.scaledWidth)x\(plan.scaledHeight) scaled image is over the limit of \(limits.maximumPixels) pixels"
            )
        }
        self = plan
    }

    /// The scale factors the options give before any limit, worked out as imgproxy's
    /// `calcScale` (`processing/prepare.go`) does: each side's shrink to the box, made one by the
    /// resizing type (`force` keeps them apart, and keeps the source's side where the box has
    /// none), `zoom`, then without `enlarge` both shrinks raised together until neither
    /// enlarges (which keeps the crop's aspect ratio) and the DPR lowered with them, the minimum
    /// sizes, and last the DPR.
    private struct Scaling {
        var crop: Cut?
        /// The size that is scaled: the crop's, or the source's.
        var width: Int
        var height: Int
        /// The box (imgproxy's target size) before rounding: the options' sides times
        /// ``dprScale`` and `zoom`; 0 where the options give no side.
        var boxWidth: Double
        var boxHeight: Double
        var scaleX: Double
        var scaleY: Double
        /// The DPR as applied: the options' one, lowered where the image cannot reach the box
        /// without enlarging.
        var dprScale: Double

        init(options: ProcessingOptions, sourceWidth: Int, sourceHeight: Int) {
            width = sourceWidth
            height = sourceHeight
            if let crop = options.crop {
                (width, height) = ProcessingPlan.cropSize(
                    crop, aspectRatio: options.cropAspectRatio, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
                self.crop = Cut(width: width, height: height, gravity: crop.gravity ?? options.gravity)
            }
            let source = (width: Double(width), height: Double(height))
            var (shrinkX, shrinkY) = Self.shrinks(options, source: source)
            shrinkX /= options.zoomX
            shrinkY /= options.zoomY
            dprScale = options.dpr
            if !options.enlarge {
                let least = min(shrinkX, shrinkY)
                if least < 1 {
                    shrinkX /= least
                    shrinkY /= least
                    // Short of the box: a DPR below 1 would take the image further from it. With
                    // `extend` the composition stays the same whatever the DPR.
                    if !options.extend { dprScale /= least }
                }
                dprScale = min(dprScale, min(shrinkX, shrinkY))
            }
            if options.minWidth > 0, source.width / Double(options.minWidth) < shrinkX {
                let least = source.width / Double(options.minWidth)
                shrinkY /= shrinkX / least
                shrinkX = least
            }
            if options.minHeight > 0, source.height / Double(options.minHeight) < shrinkY {
                let least = source.height / Double(options.minHeight)
                shrinkX /= shrinkY / least
                shrinkY = least
            }
            scaleX = 1 / min(shrinkX / dprScale, source.width)
            scaleY = 1 / min(shrinkY / dprScale, source.height)
            boxWidth = Double(options.width) * dprScale * options.zoomX
            boxHeight = Double(options.height) * dprScale * options.zoomY
        }

        /// Each side's shrink to the box (source over box; 1 where the box has no side), made one
        /// by the resizing type, `auto` decided by the orientations of the image and the box.
        private static func shrinks(_ options: ProcessingOptions, source: (width: Double, height: Double)) -> (Double, Double) {
            let box = (
                width: options.width == 0 ? source.width : Double(options.width),
                height: options.height == 0 ? source.height : Double(options.height)
            )
            var shrinkX = box.width != source.width ? source.width / box.width : 1
            var shrinkY = box.height != source.height ? source.height / box.height : 1
            guard shrinkX != 1 || shrinkY != 1 else { return (1, 1) }
            var type = options.resizingType
            if type == .auto { type = (source.width >= source.height) == (box.width >= box.height) ? .fill : .fit }
            if options.width == 0, type != .force {
                shrinkX = shrinkY
            } else if options.height == 0, type != .force {
                shrinkY = shrinkX
            } else if type == .fit {
                shrinkX = max(shrinkX, shrinkY)
                shrinkY = shrinkX
            } else if type == .fill || type == .fillDown {
                shrinkX = min(shrinkX, shrinkY)
                shrinkY = shrinkX
            }
            return (shrinkX, shrinkY)
        }
    }

    /// The sizes of `base` with every scale, the box and the padding multiplied by `limitScale`;
    /// no side scaled below one pixel (imgproxy's `calcSizes`).
    private init(_ base: Scaling, options: ProcessingOptions, limitScale: Double) {
        crop = base.crop
        self.limitScale = limitScale
        dprScale = base.dprScale * limitScale
        let scaleX = max(base.scaleX * limitScale, 1 / Double(base.width))
        let scaleY = max(base.scaleY * limitScale, 1 / Double(base.height))
        keepsAspectRatio = base.scaleX == base.scaleY
        scaledWidth = Self.side(Double(base.width) * scaleX)
        scaledHeight = Self.side(Double(base.height) * scaleY)
        isDownscaled = scaledWidth < base.width || scaledHeight < base.height
        let boxWidth = Int((base.boxWidth * limitScale).rounded())
        let boxHeight = Int((base.boxHeight * limitScale).rounded())
        let resultCrop = Self.resultCrop(
            options, scaledWidth: scaledWidth, scaledHeight: scaledHeight, boxWidth: boxWidth, boxHeight: boxHeight)
        fill = Self.fillCut(resultCrop, scaledWidth: scaledWidth, scaledHeight: scaledHeight, gravity: options.gravity)
        var width = fill?.width ?? scaledWidth
        var height = fill?.height ?? scaledHeight
        if options.extend, boxWidth > width || boxHeight > height {
            extended = Cut(width: max(boxWidth, width), height: max(boxHeight, height), gravity: options.extendGravity)
            (width, height) = (max(boxWidth, width), max(boxHeight, height))
        }
        let out = (Self.minimumNonZero(scaledWidth, resultCrop.width), Self.minimumNonZero(scaledHeight, resultCrop.height))
        if options.extendAspectRatio, let canvas = Self.aspectCanvas(out: out, boxWidth: boxWidth, boxHeight: boxHeight),
            canvas.width > width || canvas.height > height
        {
            (width, height) = (max(canvas.width, width), max(canvas.height, height))
            aspectExtended = Cut(width: width, height: height, gravity: options.extendAspectRatioGravity)
        }
        if let padding = options.padding {
            let scale = { (side: Int) in Self.paddingSide(side, dprScale: base.dprScale * limitScale) }
            width += scale(padding.left) + scale(padding.right)
            height += scale(padding.top) + scale(padding.bottom)
        }
        resultWidth = width
        resultHeight = height
    }

    /// The crop to the result (imgproxy's `ResultCrop`): the box, or for `fill-down` without
    /// `enlarge` on an image that came out smaller than the box, the box's aspect ratio cut from
    /// it. A side of 0 keeps the image's.
    private static func resultCrop(
        _ options: ProcessingOptions, scaledWidth: Int, scaledHeight: Int, boxWidth: Int, boxHeight: Int
    ) -> (width: Int, height: Int) {
        guard options.resizingType == .fillDown, !options.enlarge else { return (boxWidth, boxHeight) }
        let differenceX = Double(boxWidth) / Double(scaledWidth)
        let differenceY = Double(boxHeight) / Double(scaledHeight)
        if differenceX > differenceY, differenceX > 1 {
            return (scaledWidth, Int((Double(scaledWidth) * Double(boxHeight) / Double(boxWidth)).rounded()))
        }
        if differenceY > differenceX, differenceY > 1 {
            return (Int((Double(scaledHeight) * Double(boxWidth) / Double(boxHeight)).rounded()), scaledHeight)
        }
        return (boxWidth, boxHeight)
    }

    /// The smaller of two sides, a side of 0 standing for none (imgproxy's `MinNonZero`).
    private static func minimumNonZero(_ first: Int, _ second: Int) -> Int {
        first == 0 ? second : second == 0 ? first : min(first, second)
    }

    /// The canvas of the box's aspect ratio around an image that came out `out` (imgproxy's
    /// `calcSizes`: the side that is short of the ratio grows, the other stays); nil without a
    /// box of two sides or when the ratio is already the box's.
    private static func aspectCanvas(out: (Int, Int), boxWidth: Int, boxHeight: Int) -> (width: Int, height: Int)? {
        guard boxWidth > 0, boxHeight > 0, out.0 > 0, out.1 > 0 else { return nil }
        let ratioWidth = Double(boxWidth) / Double(out.0)
        let ratioHeight = Double(boxHeight) / Double(out.1)
        if ratioHeight > ratioWidth { return (out.0, Int((Double(out.0) * Double(boxHeight) / Double(boxWidth)).rounded())) }
        if ratioWidth > ratioHeight { return (Int((Double(out.1) * Double(boxWidth) / Double(boxHeight)).rounded()), out.1) }
        return nil
    }

    /// A side in whole pixels, at least one; a side past what an `Int` holds is kept finite so
    /// that the limit scales it down rather than trapping.
    private static func side(_ value: Double) -> Int {
        max(1, Int(min(value.rounded(), 1e15)))
    }

    /// One side's padding in pixels: the option times the DPR as applied, rounded half to even
    /// (imgproxy's `ScaleToEven`).
    private static func paddingSide(_ side: Int, dprScale: Double) -> Int {
        Int((Double(side) * dprScale).rounded(.toNearestOrEven))
    }

    /// The cut of the scaled image to the result crop, by the gravity; nil when it keeps the
    /// whole image.
    private static func fillCut(_ crop: (width: Int, height: Int), scaledWidth: Int, scaledHeight: Int, gravity: Gravity) -> Cut? {
        let width = minimumNonZero(crop.width, scaledWidth)
        let height = minimumNonZero(crop.height, scaledHeight)
        guard width < scaledWidth || height < scaledHeight else { return nil }
        return Cut(width: width, height: height, gravity: gravity)
    }

    /// A crop side: 0 is the whole side, below 1 a fraction of it, else pixels (at most the side).
    /// The crop's size in pixels of a `sourceWidth` x `sourceHeight` image, corrected to
    /// `crop_aspect_ratio`: the long side shrunk to the ratio, or with `enlarge` the short side
    /// grown, and then, if a side overflows the image, both shrunk to fit it at the ratio.
    static func cropSize(
        _ crop: ProcessingOptions.Crop, aspectRatio: ProcessingOptions.CropAspectRatio?, sourceWidth: Int, sourceHeight: Int
    ) -> (width: Int, height: Int) {
        var width = Double(cropSide(crop.width, of: sourceWidth))
        var height = Double(cropSide(crop.height, of: sourceHeight))
        guard let aspectRatio else { return (Int(width), Int(height)) }
        let ratio = aspectRatio.ratio
        if (width / height > ratio) != aspectRatio.enlarge { width = height * ratio } else { height = width / ratio }
        let overflow = max(width / Double(sourceWidth), height / Double(sourceHeight))
        if overflow > 1 { (width, height) = (width / overflow, height / overflow) }
        return (
            min(sourceWidth, max(1, Int(width.rounded()))), min(sourceHeight, max(1, Int(height.rounded())))
        )
    }

    static func cropSide(_ value: Double, of side: Int) -> Int {
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
            steps.append(
                Self.cut(
                    Cut(width: cropWidth, height: cropHeight, gravity: crop.gravity), outerWidth: width, outerHeight: height,
                    dpr: dprScale))
            (width, height) = (cropWidth, cropHeight)
        }
        if width != scaledWidth || height != scaledHeight {
            if crop == nil, keepsAspectRatio, decodedWidth < sourceWidth, 0...1 ~= width - scaledWidth, 0...1 ~= height - scaledHeight {
                // The decoder scaled by the planned factor and rounded a side up: 2048x1365 by
                // DCT quarters is 512x342 where the plan says 341, the last row covering a
                // quarter of a source row. Dropping that row keeps the scale exact; resampling
                // 342 rows to 341 would blur every row and took 15% of such a request's time.
                steps.append(CroppingTransformer(x: 0, y: 0, width: scaledWidth, height: scaledHeight))
            } else if let fill, fill.gravity.kind != .smart {
                // The cut that follows, made by the resize itself: only the kept part is computed.
                let origin = fill.gravity.origin(
                    width: fill.width, height: fill.height, outerWidth: scaledWidth, outerHeight: scaledHeight, dpr: dprScale)
                let window = ResizeWindow(x: origin.x, y: origin.y, width: fill.width, height: fill.height)
                steps.append(
                    ResizingTransformer(width: scaledWidth, height: scaledHeight, keeping: window, filter: options.resizingAlgorithm))
                return steps + finishing(options: options, width: fill.width, height: fill.height)
            } else {
                steps.append(
                    ResizingTransformer(width: scaledWidth, height: scaledHeight, mode: .fill, filter: options.resizingAlgorithm))
            }
            (width, height) = (scaledWidth, scaledHeight)
        }
        if let fill {
            steps.append(Self.cut(fill, outerWidth: width, outerHeight: height, dpr: dprScale))
            (width, height) = (fill.width, fill.height)
        }
        return steps + finishing(options: options, width: width, height: height)
    }

    /// The filters, `extend` and `padding`, on a `width` x `height` image already cut and resized.
    private func finishing(options: ProcessingOptions, width: Int, height: Int) -> [any ImageTransformer] {
        var steps: [any ImageTransformer] = []
        var (width, height) = (width, height)
        if options.blur > 0 { steps.append(BlurTransformer(radius: options.blur)) }
        if options.sharpen > 0 { steps.append(SharpeningTransformer(sigma: options.sharpen)) }
        if let masking = options.unsharpMasking, masking.mode == .always || (masking.mode == .auto && isDownscaled && options.sharpen == 0)
        {
            steps.append(UnsharpMaskTransformer(weight: masking.weight, divider: masking.divider))
        }
        if options.pixelate > 1 {
            steps.append(PixelatingTransformer(blockSize: Int((Double(options.pixelate) * dprScale).rounded())))
        }
        if options.colorFilters.isActive { steps.append(ColorFilterTransformer(options: options.colorFilters)) }
        let canvasColor = options.background ?? .clear
        // `extend`, then `extend_aspect_ratio`: each a canvas the image sits on by its gravity.
        for canvas in [extended, aspectExtended].compactMap({ $0 }) {
            let origin = canvas.gravity.origin(
                width: width, height: height, outerWidth: canvas.width, outerHeight: canvas.height, dpr: dprScale)
            steps.append(CanvasTransformer(width: canvas.width, height: canvas.height, x: origin.x, y: origin.y, color: canvasColor))
            (width, height) = (canvas.width, canvas.height)
        }
        if let padding = options.padding {
            let scale = { (side: Int) in Self.paddingSide(side, dprScale: dprScale) }
            steps.append(
                CanvasTransformer(
                    width: width + scale(padding.left) + scale(padding.right), height: height + scale(padding.top) + scale(padding.bottom),
                    x: scale(padding.left), y: scale(padding.top), color: canvasColor))
        }
        return steps
    }

    /// A cut of `outerWidth` x `outerHeight` by its gravity: the smart crop, or a plain crop
    /// where the gravity puts it.
    private static func cut(_ cut: Cut, outerWidth: Int, outerHeight: Int, dpr: Double) -> any ImageTransformer {
        if cut.gravity.kind == .smart { return SmartCroppingTransformer(width: cut.width, height: cut.height) }
        let origin = cut.gravity.origin(width: cut.width, height: cut.height, outerWidth: outerWidth, outerHeight: outerHeight, dpr: dpr)
        return CroppingTransformer(x: origin.x, y: origin.y, width: cut.width, height: cut.height)
    }
}
