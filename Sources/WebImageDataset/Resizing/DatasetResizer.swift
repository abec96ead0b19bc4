package import Foundation
package import WebImage

/// img2dataset's `--resize_mode`s, with its arithmetic (its `resizer.py`, which calls
/// albumentations 1.4's `SmallestMaxSize`, `LongestMaxSize`, `CenterCrop` and `PadIfNeeded`).
package enum DatasetResizeMode: String, CaseIterable, Sendable {
    /// Kept at its size.
    case no
    /// The shorter side made `image_size`, the aspect ratio kept.
    case keepRatio = "keep_ratio"
    /// The longer side made `image_size`, the aspect ratio kept.
    case keepRatioLargest = "keep_ratio_largest"
    /// The shorter side made `image_size`, then the middle `image_size` square cut out.
    case centerCrop = "center_crop"
    /// The longer side made `image_size`, then padded with white to an `image_size` square,
    /// centred.
    case border

    package static let names = "no, keep_ratio, keep_ratio_largest, center_crop or border"
}

/// What img2dataset's resizer does to one image of a given size, worked out before any pixel is
/// touched: the size to resample to, the square to cut or the canvas to pad to, or nothing.
package struct DatasetResizePlan: Equatable {
    /// The size the image is resampled to; nil keeps its size.
    package var scaled: (width: Int, height: Int)?
    /// The part kept after scaling (center_crop): x, y, width, height.
    package var crop: (x: Int, y: Int, width: Int, height: Int)?
    /// The canvas padded to after scaling (border): width, height and where the image sits.
    package var pad: (width: Int, height: Int, x: Int, y: Int)?
    /// Whether the image is made smaller (img2dataset's "area" filter) rather than larger
    /// ("lanczos").
    package var downscale = false

    /// A plan of these steps; the default does nothing.
    package init(
        scaled: (width: Int, height: Int)? = nil, crop: (x: Int, y: Int, width: Int, height: Int)? = nil,
        pad: (width: Int, height: Int, x: Int, y: Int)? = nil, downscale: Bool = false
    ) {
        (self.scaled, self.crop, self.pad, self.downscale) = (scaled, crop, pad, downscale)
    }

    /// The resampling filter: img2dataset's "area" when shrinking, "lanczos" when enlarging.
    package var filter: ResamplingFilter { downscale ? .bilinear : .lanczos3 }

    /// Whether the pixels change at all (they must be encoded again).
    package var changes: Bool { scaled != nil || crop != nil || pad != nil }

    /// The size of the result.
    package func resultSize(width: Int, height: Int) -> (width: Int, height: Int) {
        if let pad { return (pad.width, pad.height) }
        if let crop { return (crop.width, crop.height) }
        return scaled ?? (width, height)
    }

    package static func == (lhs: DatasetResizePlan, rhs: DatasetResizePlan) -> Bool {
        lhs.scaled.map { [$0.width, $0.height] } == rhs.scaled.map { [$0.width, $0.height] }
            && lhs.crop.map { [$0.x, $0.y, $0.width, $0.height] } == rhs.crop.map { [$0.x, $0.y, $0.width, $0.height] }
            && lhs.pad.map { [$0.width, $0.height, $0.x, $0.y] } == rhs.pad.map { [$0.width, $0.height, $0.x, $0.y] }
            && lhs.downscale == rhs.downscale
    }
}

/// img2dataset's resizer: filters by size, resizes by mode, mattes transparency on white, and
/// encodes as `--encode-format` at `--encode-quality`.
package struct DatasetResizer: Sendable {
    package var imageSize = 256
    package var mode = DatasetResizeMode.border
    package var onlyIfBigger = false
    /// Keep the downloaded bytes when they are already in the encode format and the pixels do
    /// not change (img2dataset's `skip_reencode`).
    package var skipReencode = false
    /// Write the downloaded bytes as they came, with no decode at all (img2dataset's
    /// `disable_all_reencoding`): no size is known then, and no filter applies.
    package var disableAllReencoding = false
    package var minimumImageSize = 0
    package var maximumImageArea = Double.infinity
    package var maximumAspectRatio = Double.infinity
    package var encodeFormat = ImageFormat.jpeg
    /// 0 to 100 for lossy formats (img2dataset's default 95); for PNG, zlib's level 0 to 9.
    package var encodeQuality = 95
    /// Keep every frame of an animation (when the encode format animates: WebP); img2dataset
    /// keeps the first frame only, which is the default.
    package var keepsAnimation = false

    /// A resizer with img2dataset's defaults where an argument is left out.
    package init(
        imageSize: Int = 256, mode: DatasetResizeMode = .border, onlyIfBigger: Bool = false, skipReencode: Bool = false,
        disableAllReencoding: Bool = false, minimumImageSize: Int = 0, maximumImageArea: Double = .infinity,
        maximumAspectRatio: Double = .infinity, encodeFormat: ImageFormat = .jpeg, encodeQuality: Int = 95, keepsAnimation: Bool = false
    ) {
        (self.imageSize, self.mode, self.onlyIfBigger, self.skipReencode) = (imageSize, mode, onlyIfBigger, skipReencode)
        (self.disableAllReencoding, self.minimumImageSize, self.maximumImageArea) = (
            disableAllReencoding, minimumImageSize, maximumImageArea
        )
        (self.maximumAspectRatio, self.encodeFormat, self.encodeQuality) = (maximumAspectRatio, encodeFormat, encodeQuality)
        self.keepsAnimation = keepsAnimation
    }

    /// A refusal, worded as img2dataset words it (its `status_dict` counts them by that text).
    package struct Refusal: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    /// What one image became.
    package struct Output: Sendable {
        package var bytes: Data
        package var width: Int?
        package var height: Int?
        package var originalWidth: Int?
        package var originalHeight: Int?
    }

    /// The plan for an image of `width` x `height` (img2dataset's `Resizer.__call__`).
    package func plan(width: Int, height: Int) -> DatasetResizePlan {
        var plan = DatasetResizePlan()
        guard mode != .no else { return plan }
        // keep_ratio and center_crop fix the shorter side (SmallestMaxSize), the others the longer.
        let side = mode == .keepRatio || mode == .centerCrop ? min(width, height) : max(width, height)
        let downscale = side > imageSize
        guard !onlyIfBigger || downscale else { return plan }
        let scaled = Self.scaled(width: width, height: height, by: Double(imageSize) / Double(side))
        plan.downscale = downscale
        plan.scaled = scaled
        if mode == .centerCrop {
            let kept = (min(imageSize, scaled.width), min(imageSize, scaled.height))
            plan.crop = ((scaled.width - kept.0) / 2, (scaled.height - kept.1) / 2, kept.0, kept.1)
        } else if mode == .border {
            let canvas = (max(imageSize, scaled.width), max(imageSize, scaled.height))
            // albumentations' get_dimension_padding: int((min - size) / 2.0) before, the rest after.
            plan.pad = (canvas.0, canvas.1, (canvas.0 - scaled.width) / 2, (canvas.1 - scaled.height) / 2)
        }
        return plan
    }

    /// albumentations' `MaxSizeTransform.apply`: `max(1, round(side * scale))` with Python's
    /// `round`, which rounds halves to even.
    package static func scaled(width: Int, height: Int, by scale: Double) -> (width: Int, height: Int) {
        (max(1, Int((Double(width) * scale).rounded(.toNearestOrEven))), max(1, Int((Double(height) * scale).rounded(.toNearestOrEven))))
    }

    /// The filters img2dataset applies after decoding, in its order; nil when the image passes.
    package func refusal(width: Int, height: Int) -> Refusal? {
        if min(width, height) < minimumImageSize { return Refusal("image too small") }
        if Double(width) * Double(height) > maximumImageArea { return Refusal("image area too large") }
        if Double(max(width, height)) / Double(max(1, min(width, height))) > maximumAspectRatio { return Refusal("aspect ratio too large") }
        return nil
    }

    /// Resizes and encodes downloaded bytes. The size comes from the header first, so that a
    /// refused image is never decoded and a JPEG is decoded at the smallest DCT scale that
    /// still covers the resize. With `blur` (`--bbox-col`), boxes are blurred as img2dataset
    /// does: on RGB pixels matted on white, after the scale and before the crop or the pad; such
    /// an image never keeps its bytes nor takes the planar JPEG path.
    package func process(_ data: Data, limits: DecodeLimits, blur: BoundingBoxBlur? = nil) throws -> Output {
        let blurs = blur.map { !$0.boxes.isEmpty } ?? false
        if disableAllReencoding { return Output(bytes: data) }
        let header = try ImageHeader(data: data)
        // Pixels as stored: img2dataset decodes with OpenCV's IMREAD_UNCHANGED, which ignores
        // the EXIF orientation, so its sizes are the stored ones and so are ours.
        let (width, height) = (header.width, header.height)
        if let refusal = refusal(width: width, height: height) { throw refusal }
        let plan = plan(width: width, height: height)
        let sourceFormat = ImageFormat(sniffing: data)
        let keepsBytes = skipReencode && !plan.changes && sourceFormat == encodeFormat && !blurs
        // JPEG has no transparency to matte: its bytes are kept without a decode.
        if keepsBytes, sourceFormat == .jpeg {
            return Output(bytes: data, width: width, height: height, originalWidth: width, originalHeight: height)
        }
        if !blurs, let bytes = try recompressedPlanar(data, sourceFormat: sourceFormat, plan: plan, limits: limits) {
            let size = plan.resultSize(width: width, height: height)
            return Output(bytes: bytes, width: size.width, height: size.height, originalWidth: width, originalHeight: height)
        }
        var options = DecodeOptions(limits: limits, firstFrameOnly: !(keepsAnimation && encodeFormat == .webP))
        if let scaled = plan.scaled, plan.downscale {
            options.thumbnail = ThumbnailSize(width: scaled.width, height: scaled.height, preservesAspectRatio: false, resamples: false)
        }
        var image = try CodersManager.shared.decode(data, options: options)
        // img2dataset mattes transparency on white, which forces an encode.
        if keepsBytes, !image.hasAlpha {
            return Output(bytes: data, width: width, height: height, originalWidth: width, originalHeight: height)
        }
        image.orientation = .up
        if let blur, blurs {
            // img2dataset mattes first, then scales, blurs, and cuts or pads.
            if image.hasAlpha { image = try transformed(image, BackgroundTransformer(color: .white)) }
            image = try apply(plan, to: image, blur: blur)
        } else {
            image = try apply(plan, to: image)
            if image.hasAlpha { image = try transformed(image, BackgroundTransformer(color: .white)) }
        }
        let size = plan.resultSize(width: width, height: height)
        return Output(
            bytes: try CodersManager.shared.encode(image, as: encodeFormat, options: encodeOptions()), width: size.width,
            height: size.height, originalWidth: width, originalHeight: height)
    }

    /// A JPEG resized into a JPEG in YCbCr (``JPEGPlanarResize``), the common case of a dataset
    /// job, without RGB pixels; nil when the job or the file needs the general path (padding,
    /// another format on either side, a file that path does not take).
    private func recompressedPlanar(_ data: Data, sourceFormat: ImageFormat?, plan: DatasetResizePlan, limits: DecodeLimits) throws
        -> Data?
    {
        guard sourceFormat == .jpeg, encodeFormat == .jpeg, plan.pad == nil, let scaled = plan.scaled else { return nil }
        let window = plan.crop.map { ResizeWindow(x: $0.x, y: $0.y, width: $0.width, height: $0.height) }
        let resize = JPEGPlanarResize(
            width: scaled.width, height: scaled.height, window: window, filter: plan.filter)
        return try resize.recompress(data, quality: encodeQuality, limits: limits)
    }

    /// The plan carried out on decoded pixels (which may be a DCT step smaller than the header's
    /// size: the scale goes from them to the planned size).
    private func apply(_ plan: DatasetResizePlan, to image: Image, blur: BoundingBoxBlur? = nil) throws -> Image {
        var image = image
        let filter = plan.filter
        if let blur {
            // The boxes are blurred on the scaled image, before its cut or its padding.
            if let scaled = plan.scaled, (image.pixelWidth, image.pixelHeight) != (scaled.width, scaled.height) {
                image = try transformed(image, ResizingTransformer(width: scaled.width, height: scaled.height, mode: .fill, filter: filter))
            }
            image = blur.apply(to: image)
            if let crop = plan.crop {
                image = try transformed(image, CroppingTransformer(x: crop.x, y: crop.y, width: crop.width, height: crop.height))
            }
        } else if let scaled = plan.scaled, let crop = plan.crop {
            // The resize and the cut in one step: only the kept square is computed.
            let window = ResizeWindow(x: crop.x, y: crop.y, width: crop.width, height: crop.height)
            image = try transformed(image, ResizingTransformer(width: scaled.width, height: scaled.height, keeping: window, filter: filter))
        } else if let scaled = plan.scaled, (image.pixelWidth, image.pixelHeight) != (scaled.width, scaled.height) {
            image = try transformed(image, ResizingTransformer(width: scaled.width, height: scaled.height, mode: .fill, filter: filter))
        }
        if let pad = plan.pad {
            image = try transformed(image, CanvasTransformer(width: pad.width, height: pad.height, x: pad.x, y: pad.y, color: .white))
        }
        return image
    }

    private func transformed(_ image: Image, _ transformer: some ImageTransformer) throws -> Image {
        guard let result = transformer.transform(image, forKey: "") else { throw Refusal("the image is too large to resize") }
        return result
    }

    /// img2dataset's encode parameters: the quality of the lossy formats, and for PNG the deflate
    /// level, 0 to 9 (img2dataset's `IMWRITE_PNG_COMPRESSION`, a zlib level; ours is libdeflate's).
    private func encodeOptions() -> EncodeOptions {
        guard encodeFormat == .png else { return EncodeOptions(quality: Double(encodeQuality) / 100) }
        var options = EncodeOptions()
        options.pngCompressionLevel = encodeQuality
        return options
    }
}
