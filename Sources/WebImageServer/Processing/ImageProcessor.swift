import Foundation
import WebImage

/// Turns a source's bytes into the result a request asks for, with the library's coders and
/// transformers: header checked against the limits, decoded at the size the plan needs (JPEG
/// by its DCT scaling, PNG by whole factors), turned upright, cut, resized, filtered, padded,
/// flattened where the format has no alpha, and encoded. Synchronous CPU work: the server runs
/// it in the library's bounded work pool.
struct ImageProcessor: Sendable {
    /// The coders that decode sources and encode results.
    let coders: CodersManager
    /// The most pixels a source may declare (all frames of an animation together).
    let maximumSourcePixels: Int
    /// The most frames an animated result keeps: the first ones of a longer source.
    let maximumAnimationFrames: Int
    /// The most pixels of each frame of an animation, which then replaces the whole-source
    /// check; 0 checks an animation's frames together.
    var maximumAnimationFramePixels = 0
    /// Quality for lossy formats when the URL gives none, 1...100.
    let defaultQuality: Int
    /// The bounds of a result and of everything made on the way to it.
    let resultLimits: ProcessingPlan.Limits
    /// Quality by format when the URL gives none, before ``defaultQuality``.
    var formatQuality: [ImageFormat: Int] = [:]
    /// The server's encoder settings.
    var encoderSettings = EncoderSettings()
    /// How video sources are decoded (their frame and bounds; the URL's `vts` and `vtk` replace
    /// the time and the keyframe choice); nil refuses them.
    var videoThumbnails: VideoFrameSelection?

    /// The encoded result of `options` on `data`, as `format`. `isCancelled` is asked between
    /// the steps (after the decode, before each transformer and before the encode): a cancelled
    /// job stops there with 499 rather than finishing work nobody waits for.
    func process(_ data: Data, options: ProcessingOptions, format: ImageFormat, isCancelled: () -> Bool = { false }) throws(ProxyError)
        -> Data
    {
        try process(data, options: options, rule: .fixed(format), isCancelled: isCancelled).data
    }

    /// The encoded result of `options` on `data`, in the format `rule` chooses for this source
    /// (which needs the decoded image: whether it is animated or has transparent pixels).
    func process(
        _ data: Data, options: ProcessingOptions, rule: OutputFormatRule, watermark: Watermark? = nil, spans: StageSpans = .off,
        isCancelled: () -> Bool = { false }
    )
        throws(ProxyError) -> (data: Data, format: ImageFormat)
    {
        let limits = SourceLimits(self, options.security)
        let (header, video) = try readHeader(data, options: options, rule: rule, limits: limits, spans: spans)
        if let unchanged = try Self.passedThrough(data, header: header, options: options) { return unchanged }
        let orientation = options.autoRotate ? header.orientation : .up
        let turnsSideways = orientation.swapsDimensions != (options.rotate % 180 != 0)
        var (uprightWidth, uprightHeight) = turnsSideways ? (header.height, header.width) : (header.width, header.height)
        var resultLimits = self.resultLimits
        if let dimension = options.security.resultDimension, dimension > 0 { resultLimits.maximumDimension = dimension }
        var plan = try ProcessingPlan(options: options, sourceWidth: uprightWidth, sourceHeight: uprightHeight, limits: resultLimits)
        var decodeOptions = self.decodeOptions(
            header: header, plan: plan, options: options, rule: rule, limits: limits, turnsSideways: turnsSideways,
            uprightSize: (uprightWidth, uprightHeight))
        let watermarked = watermark != nil && (options.watermark?.opacity ?? 0) > 0
        if let planar = planarResize(
            header: header, plan: plan, options: options, rule: rule, thumbnail: decodeOptions.thumbnail, sourceWidth: uprightWidth,
            hasWatermark: watermarked),
            let result = try recompress(
                data, planar.resize, as: planar.format, header: header, options: options, spans: spans, isCancelled: isCancelled)
        {
            return (result, planar.format)
        }
        // imgproxy keeps the first frames of a longer animation (one: a still) rather than refusing it.
        decodeOptions.maximumFrames = limits.frames
        var image: Image
        if let video { image = video.image } else { image = try decode(data, format: header.format, options: decodeOptions, spans: spans) }
        try limits.check(frames: image.frames.count, width: header.width, height: header.height)
        if options.stripMetadata { image.exif = options.keepCopyright ? image.exif.flatMap(CopyrightEXIF.kept(from:)) : nil }
        let transparent =
            (options.background == nil || options.backgroundAlpha < 1) && (image.hasAlpha || options.padding != nil || options.extend)
        let animated = image.frames.count > 1 && !options.disableAnimation
        let candidates = rule.candidates(source: header.format, animated: animated, transparent: transparent)
        let stacked = try Self.keepPages(
            &image, options: options, resultAnimates: animated && OutputFormatRule.animates(candidates[0]), limits: limits)
        // imgproxy trims first, in the stored orientation, and plans from what is left; never an
        // animation ("Trim is not supported for animated images").
        let trimmed = try options.trim.flatMap { trim throws(ProxyError) in try Self.trim(&image, trim, isCancelled: isCancelled) } ?? false
        image = try Self.orient(image, options: options, spans: spans, isCancelled: isCancelled)
        if trimmed || stacked || Self.enforcesThumbnail(options, header) {
            (uprightWidth, uprightHeight) = (image.pixelWidth, image.pixelHeight)
            plan = try ProcessingPlan(options: options, sourceWidth: uprightWidth, sourceHeight: uprightHeight, limits: resultLimits)
        }
        if image.frames.count > 1 {
            // Every frame of an animation is a result of its own: together they keep the limit.
            var perFrame = resultLimits
            perFrame.maximumPixels = max(1, resultLimits.maximumPixels / image.frames.count)
            plan = try ProcessingPlan(options: options, sourceWidth: uprightWidth, sourceHeight: uprightHeight, limits: perFrame)
        }
        var steps = plan.transformers(
            options: options, decodedWidth: image.pixelWidth, decodedHeight: image.pixelHeight, sourceWidth: uprightWidth)
        steps += try finishingSteps(format: candidates[0], options: options, watermark: watermark, plan: plan, limits: resultLimits)
        image = try spans.measure("transform", attributes: [("webimage.steps", steps.map(\.transformerKey).joined(separator: " "))]) {
            () throws(ProxyError) in try Self.apply(steps, to: image, isCancelled: isCancelled)
        }
        return try encodeSmallest(image, candidates: candidates, options: options, spans: spans, isCancelled: isCancelled)
    }

    /// The source's header, checked against the pixel limit, and for a video the frame the
    /// options pick (a video is decoded first: its header is its frame's).
    private func readHeader(
        _ data: Data, options: ProcessingOptions, rule: OutputFormatRule, limits: SourceLimits, spans: StageSpans
    ) throws(ProxyError) -> (ImageHeader, (header: ImageHeader, image: Image)?) {
        let video = try videoFrame(data, options: options, rule: rule, limits: limits, spans: spans)
        let header: ImageHeader
        if let video {
            header = video.header
        } else {
            do { header = try ImageHeader(data: data) } catch { throw Self.proxyError(error) }
        }
        // The header states one frame's size: an animation is checked whole once decoded.
        guard header.pixelCount <= max(limits.pixels, limits.framePixels) else {
            throw .unprocessable(
                "the source's \(header.width)x\(header.height) pixels are over the limit of \(Self.megapixels(limits.pixels)) MP")
        }
        return (header, video)
    }

    /// The source itself, when the options ask for it unprocessed: imgproxy's
    /// `skipStandardProcessing`, and an SVG asked for as SVG.
    private static func passedThrough(_ data: Data, header: ImageHeader, options: ProcessingOptions) throws(ProxyError)
        -> (data: Data, format: ImageFormat)?
    {
        if options.skipProcessing.contains(header.format), options.format == nil || options.format == header.format {
            return (data, header.format)
        }
        guard options.format == .svg else { return nil }
        // Nothing here draws vectors: an SVG asked for as SVG is the source itself, as imgproxy
        // answers it (`TestAlwaysRasterizeSvgWithFormat`); anything else is `TestErrorSavingToSVG`'s 422.
        guard header.format == .svg else { throw .unprocessable("a raster image cannot be written as SVG") }
        return (data, .svg)
    }

    /// imgproxy's `enforce_thumbnail`: a HEIF's embedded thumbnail (the smallest) in place of its image.
    private static func enforcesThumbnail(_ options: ProcessingOptions, _ header: ImageHeader) -> Bool {
        options.enforceThumbnail && (header.format == .heic || header.format == .heif)
    }

    /// How the source is decoded: its limits, the frames and metadata kept, and the size the
    /// decoder may reduce it to.
    private func decodeOptions(
        header: ImageHeader, plan: ProcessingPlan, options: ProcessingOptions, rule: OutputFormatRule, limits: SourceLimits,
        turnsSideways: Bool, uprightSize: (width: Int, height: Int)
    ) -> DecodeOptions {
        var decodeOptions = DecodeOptions(
            limits: DecodeLimits(maximumPixelCount: limits.decodedPixels),
            firstFrameOnly: (!rule.mayAnimate || options.disableAnimation) && options.page == 0 && options.pages == 1,
            keepsColorProfile: !options.stripColorProfile, keepsEXIF: !options.stripMetadata || options.keepCopyright)
        decodeOptions.keepsHighBitDepth = keepsHighBitDepth(options, rule: rule, source: header.format)
        if Self.enforcesThumbnail(options, header) {
            decodeOptions.thumbnail = ThumbnailSize(width: 1, height: 1, preservesAspectRatio: false, resamples: false)
        } else if plan.crop == nil, options.trim == nil, options.pages == 1, plan.scaledWidth < uprightSize.width,
            plan.scaledHeight < uprightSize.height
        {
            // A trim's box is found in the whole source's pixels, and stacked pages are planned
            // whole, so those sources are decoded at full size.
            // The decoder scales by its own steps (DCT eighths, whole factors) to at least this
            // box; the plan's transformers go the rest of the way: one resampling at most.
            let (width, height) = turnsSideways ? (plan.scaledHeight, plan.scaledWidth) : (plan.scaledWidth, plan.scaledHeight)
            decodeOptions.thumbnail = ThumbnailSize(width: width, height: height, preservesAspectRatio: false, resamples: false)
        }
        return decodeOptions
    }

    /// Whether a source in `source` is decoded at its high bit depth: `preserve_hdr` asked, and
    /// the rule may choose a format whose encoder writes it (PNG, AVIF, JPEG XL and TIFF: imgproxy's
    /// `SupportsHDR` set; HEIF is not offered as a result).
    private func keepsHighBitDepth(_ options: ProcessingOptions, rule: OutputFormatRule, source: ImageFormat) -> Bool {
        options.preserveHDR
            && [false, true].contains { transparent in
                rule.candidates(source: source, animated: false, transparent: transparent).contains(where: coders.encodesHighBitDepth)
            }
    }

    private func decode(_ data: Data, format: ImageFormat, options: DecodeOptions, spans: StageSpans) throws(ProxyError) -> Image {
        do {
            return try spans.measure("decode", attributes: [("image.format", format.rawValue)]) { () throws(WebImageError) in
                try coders.decode(data, options: options)
            }
        } catch {
            throw Self.proxyError(error)
        }
    }

    /// For a still result, the page asked for (imgproxy's `page`, ignored when the result
    /// animates), or `pages` of them from there stacked top to bottom; whether pages were stacked.
    private static func keepPages(_ image: inout Image, options: ProcessingOptions, resultAnimates: Bool, limits: SourceLimits)
        throws(ProxyError) -> Bool
    {
        guard !resultAnimates else { return false }
        guard options.page < image.frames.count else {
            throw .badRequest("page \(options.page) is past the source's \(image.frames.count) (page)")
        }
        let kept = image.frames[options.page..<min(image.frames.count, options.page + options.pages)]
        image.frames = [kept.count > 1 ? try stack(kept, maximumPixels: limits.decodedPixels) : kept[kept.startIndex]]
        return kept.count > 1
    }

    /// The image upright (its EXIF orientation, when the options turn it), rotated and flipped.
    private static func orient(_ image: Image, options: ProcessingOptions, spans: StageSpans, isCancelled: () -> Bool)
        throws(ProxyError) -> Image
    {
        var image = image
        if !options.autoRotate { image.orientation = .up }
        var steps: [any ImageTransformer] = [OrientationTransformer()]
        if options.rotate != 0 { steps.append(RotationTransformer(degrees: Double(-options.rotate))) }
        if options.flipHorizontally || options.flipVertically {
            steps.append(FlippingTransformer(horizontal: options.flipHorizontally, vertical: options.flipVertically))
        }
        return try spans.measure("orient") { () throws(ProxyError) in try apply(steps, to: image, isCancelled: isCancelled) }
    }

    /// The steps after the plan's: the background a format without alpha (or the options) lays
    /// under the result, then the watermark over it.
    private func finishingSteps(
        format: ImageFormat, options: ProcessingOptions, watermark: Watermark?, plan: ProcessingPlan, limits: ProcessingPlan.Limits
    )
        throws(ProxyError) -> [any ImageTransformer]
    {
        var steps: [any ImageTransformer] = []
        if var background = options.background ?? (format == .jpeg ? .white : nil) {
            // imgproxy's `background_alpha`, where the format keeps an alpha channel.
            if format != .jpeg { background.alpha = UInt8((options.backgroundAlpha * 255).rounded()) }
            steps.append(BackgroundTransformer(color: background))
        }
        if let watermark, let placing = options.watermark, placing.opacity > 0 {
            // Last, over the flattened result, as imgproxy's pipeline lays it.
            steps.append(
                WatermarkTransformer(
                    mark: try decodeWatermark(watermark), options: placing, opacity: placing.opacity * watermark.opacity,
                    offsetScale: plan.dprScale, maximumPixels: limits.maximumPixels))
        }
        return steps
    }

    /// `image` encoded as each candidate (`format:best` has several), the smallest kept (the
    /// first on a tie).
    private func encodeSmallest(
        _ image: Image, candidates: [ImageFormat], options: ProcessingOptions, spans: StageSpans, isCancelled: () -> Bool
    ) throws(ProxyError) -> (data: Data, format: ImageFormat) {
        var best: (data: Data, format: ImageFormat)?
        for candidate in candidates {
            let encoded = try spans.measure("encode", attributes: [("image.format", candidate.rawValue)]) { () throws(ProxyError) in
                try encode(image, as: candidate, options: options, isCancelled: isCancelled)
            }
            if encoded.count < best?.data.count ?? Int.max { best = (encoded, candidate) }
        }
        guard let best else { throw .unprocessable("no format could be chosen for the result") }
        return best
    }

    /// `image` encoded as `format` at the options' quality (``encodeAtQuality(_:options:isCancelled:_:)``).
    private func encode(_ image: Image, as format: ImageFormat, options: ProcessingOptions, isCancelled: () -> Bool) throws(ProxyError)
        -> Data
    {
        var encoding = encodeOptions()
        if format == .jpegXL {
            let budget = try Self.jpegXLEffort(pixels: image.pixelWidth * image.pixelHeight * image.frames.count)
            encoding.jxlEffort = min(encoderSettings.jxlEffort, budget)
        }
        return try encodeAtQuality(format, options: options, isCancelled: isCancelled) { quality throws(WebImageError) in
            encoding.quality = Double(quality) / 100
            return try coders.encode(image, as: format, options: encoding)
        }
    }

    /// The encoder settings as the codecs take them (the quality is each encode's own).
    func encodeOptions() -> EncodeOptions {
        var encoding = EncodeOptions(
            progressive: encoderSettings.jpegProgressive, webPMethod: encoderSettings.webPEffort, avifSpeed: encoderSettings.avifSpeed)
        encoding.webPPreset = encoderSettings.webPPreset
        encoding.pngCompressionLevel = encoderSettings.pngCompressionLevel
        encoding.pngInterlaced = encoderSettings.pngInterlaced
        encoding.pngPaletteColors = encoderSettings.pngQuantize ? encoderSettings.pngQuantizationColors : nil
        return encoding
    }

    /// What `encode` makes at the options' quality: chosen by `autoquality`'s size search when
    /// the URL asks for it, then lowered by `max_bytes`' steps until it fits.
    func encodeAtQuality(
        _ format: ImageFormat, options: ProcessingOptions, isCancelled: () -> Bool, _ encode: (Int) throws(WebImageError) -> Data
    ) throws(ProxyError) -> Data {
        func attempt(_ quality: Int) throws(ProxyError) -> Data {
            try Self.check(isCancelled)
            do { return try encode(quality) } catch {
                throw .unprocessable("the result could not be encoded as \(format.rawValue): \(error.detail)")
            }
        }
        var quality = options.quality(for: format, defaults: formatQuality, fallback: defaultQuality)
        var encoded: Data
        if let autoquality = options.autoquality, Self.lossyFormats.contains(format) {
            (quality, encoded) = try Self.search(autoquality, attempt)
        } else {
            encoded = try attempt(quality)
        }
        while options.maxBytes > 0, Self.lossyFormats.contains(format),
            let lower = Self.qualityToFit(quality: quality, size: encoded.count, target: options.maxBytes)
        {
            quality = lower
            encoded = try attempt(quality)
        }
        return encoded
    }

    /// `autoquality`'s `size` method: the highest quality in its range whose result fits its
    /// target, by bisection (the maximum first, as most results fit there); the minimum's result
    /// when none fits. imgproxy Pro's search is not public; its documentation names the result.
    static func search(_ autoquality: Autoquality, _ attempt: (Int) throws(ProxyError) -> Data) throws(ProxyError)
        -> (quality: Int, data: Data)
    {
        let highest = try attempt(autoquality.maximum)
        if highest.count <= autoquality.target || autoquality.minimum == autoquality.maximum { return (autoquality.maximum, highest) }
        var fitting: (quality: Int, data: Data)?
        var (low, high) = (autoquality.minimum, autoquality.maximum - 1)
        var lowest: Data?
        while low <= high {
            let middle = (low + high) / 2
            let encoded = try attempt(middle)
            if middle == autoquality.minimum { lowest = encoded }
            if encoded.count <= autoquality.target {
                fitting = (middle, encoded)
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        if let fitting { return fitting }
        if let lowest { return (autoquality.minimum, lowest) }
        return (autoquality.minimum, try attempt(autoquality.minimum))
    }

    /// `pages`: the frames one under another, left-aligned on a transparent canvas as wide as
    /// the widest. The canvas is a source the plan then resizes, so it is held to what a decoded
    /// source may be: `maximumPixels` (frames of one size, as decoders give them, always fit, since
    /// they were decoded within it together).
    static func stack(_ frames: ArraySlice<ImageFrame>, maximumPixels: Int) throws(ProxyError) -> ImageFrame {
        let width = frames.map(\.pixels.width).max() ?? 0
        let height = frames.reduce(0) { $0 + $1.pixels.height }
        guard width * height <= maximumPixels else {
            throw .unprocessable(
                "\(frames.count) pages stacked would be \(width)x\(height), over the source limit of \(maximumPixels) pixels")
        }
        // Pages kept at 16 bits are stacked at 16; a mix of depths (no decoder makes one) at 8.
        let wide = frames.allSatisfy(\.pixels.isHighBitDepth)
        var canvas = RGBACanvas(width: width, height: height, bitsPerSample: wide ? 16 : 8)
        var top = 0
        for frame in frames {
            canvas.draw(wide ? frame.pixels : frame.pixels.reducedToEightBits(describedBy: nil), left: 0, top: top)
            top += frame.pixels.height
        }
        return ImageFrame(pixels: canvas.pixels)
    }

    /// The formats whose encoders take a quality, which `max_bytes` lowers.
    static let lossyFormats: Set<ImageFormat> = [.jpeg, .webP, .avif, .jpegXL, .heic]

    /// The next quality `max_bytes` tries after a result of `size` bytes at `quality`, nil when
    /// that result is kept: it fits `target`, or the quality is already 10 or less. imgproxy's
    /// `saveImageToFitBytes` (`processing/save_fit_bytes.go`): a quarter of the quality when the
    /// result is over three times the target, half over 1.5 times, else three quarters, rounded,
    /// always at least one lower and never below 1.
    static func qualityToFit(quality: Int, size: Int, target: Int) -> Int? {
        guard size > target, quality > 10 else { return nil }
        let excess = Double(size) / Double(target)
        let factor = excess > 3 ? 0.25 : excess > 1.5 ? 0.5 : 0.75
        return max(1, min(quality - 1, Int((Double(quality) * factor).rounded())))
    }

    /// The server's watermark for one result: its bytes and the opacity every URL's is multiplied by.
    struct Watermark: Sendable {
        var data: Data
        var opacity: Double
        /// Drawn from `wmt`'s text: cut to its ink, the transparent canvas around it dropped.
        var isText = false
    }

    /// A video source's frame (the one the options and ``videoThumbnails`` select), and the
    /// header the processing plans from, which is the frame's; nil for a source that is no video.
    private func videoFrame(
        _ data: Data, options: ProcessingOptions, rule: OutputFormatRule, limits: SourceLimits, spans: StageSpans
    ) throws(ProxyError) -> (header: ImageHeader, image: Image)? {
        guard let format = ImageFormat(sniffing: data), format.isVideo else { return nil }
        guard var selection = videoThumbnails else {
            throw .unprocessable(
                "the source is a video (\(format.rawValue)) and video thumbnails are off (IMGPROXY_ENABLE_VIDEO_THUMBNAILS)")
        }
        selection.second = options.videoThumbnailSecond
        selection.keyframesOnly = options.videoThumbnailKeyframes
        let decodeLimits = DecodeLimits(maximumPixelCount: limits.decodedPixels)
        var image: Image
        do {
            image = try spans.measure("decode", attributes: [("image.format", format.rawValue)]) { () throws(WebImageError) in
                guard let layout = options.videoFrameLayout else {
                    var decodeOptions = DecodeOptions(limits: decodeLimits)
                    decodeOptions.video = selection
                    decodeOptions.keepsHighBitDepth = keepsHighBitDepth(options, rule: rule, source: format)
                    return try coders.decode(data, options: decodeOptions)
                }
                (selection.count, selection.step) = (min(layout.frameCount, limits.frames), layout.step)
                return try coders.videoFrames(data, format: format, selection: selection, limits: decodeLimits, shaping: layout.shape)
            }
        } catch {
            throw Self.proxyError(error)
        }
        if let layout = options.videoFrameLayout {
            image = try layout.arrange(image, maximumPixels: limits.decodedPixels, maximumFrames: limits.frames)
        }
        var header = ImageHeader(format: format, width: image.pixelWidth, height: image.pixelHeight)
        header.orientation = image.orientation
        return (header, image)
    }

    /// The watermark's first frame, upright, within the source limits; a text's cut to its ink.
    private func decodeWatermark(_ watermark: Watermark) throws(ProxyError) -> Image {
        let options = DecodeOptions(limits: DecodeLimits(maximumPixelCount: maximumSourcePixels), firstFrameOnly: true)
        var mark: Image
        do {
            mark = try coders.decode(watermark.data, options: options)
            mark = OrientationTransformer().transform(mark, forKey: "") ?? mark
        } catch {
            throw .unprocessable("the watermark could not be decoded: \(error.detail)")
        }
        guard watermark.isText else { return mark }
        guard let ink = TrimFinder.inkBox(of: mark.frames[0].pixels) else { throw .badRequest("wmt: the text draws nothing") }
        return try Self.apply(
            [CroppingTransformer(x: ink.x, y: ink.y, width: ink.width, height: ink.height)], to: mark, isCancelled: { false })
    }

    /// Cuts `image`'s borders by `trim`; whether anything was cut. A still only.
    private static func trim(_ image: inout Image, _ trim: ProcessingOptions.Trim, isCancelled: () -> Bool) throws(ProxyError) -> Bool {
        guard image.frames.count == 1 else { return false }
        let finder = TrimFinder(
            threshold: trim.threshold, background: trim.color, equalHorizontal: trim.equalHorizontal, equalVertical: trim.equalVertical)
        // The box is found in 8-bit pixels; a 16-bit image is cut and stays 16-bit.
        guard let box = finder.box(in: image.frames[0].pixels.reducedToEightBits(describedBy: image.sourceColor)) else { return false }
        image = try apply(
            [CroppingTransformer(x: box.x, y: box.y, width: box.width, height: box.height)], to: image, isCancelled: isCancelled)
        return true
    }

    /// The source limits of one request: the server's, or the URL's security options in their
    /// place (imgproxy's `security/checker.go`).
    struct SourceLimits {
        /// The most pixels of the whole source (all frames).
        var pixels: Int
        /// The most pixels of each frame of an animation; 0 when the whole is checked instead.
        var framePixels: Int
        /// The most frames kept.
        var frames: Int

        init(_ processor: ImageProcessor, _ security: ProcessingOptions.SecurityLimits) {
            pixels = security.sourcePixels ?? processor.maximumSourcePixels
            framePixels = security.animationFramePixels ?? processor.maximumAnimationFramePixels
            frames = security.animationFrames ?? processor.maximumAnimationFrames
        }

        /// What the decoder may allocate: the whole source, or every kept frame at its own limit.
        var decodedPixels: Int { max(pixels, framePixels.multipliedReportingOverflow(by: frames).partialValue) }

        /// Refuses a decoded source over the limits: an animation frame by frame when a frame
        /// limit is set, else all its frames together.
        func check(frames count: Int, width: Int, height: Int) throws(ProxyError) {
            if count > 1, framePixels > 0 {
                guard width * height <= framePixels else {
                    throw .unprocessable(
                        "the source's \(width)x\(height) frames are over the limit of \(ImageProcessor.megapixels(framePixels)) MP a frame")
                }
                return
            }
            guard width * height * count <= pixels else {
                throw .unprocessable(
                    "the source's \(count) frames of \(width)x\(height) are over the limit of \(ImageProcessor.megapixels(pixels)) MP")
            }
        }
    }

    /// The most memory one result's encoder may take. With the decoded source, the resize and
    /// the result it bounds a job's peak, which docs/deploy.md's sizing and the systemd unit's
    /// `MemoryMax` are worked out from.
    static let encoderMemoryBudget = 512 * 1024 * 1024

    /// libjxl 0.7's effort for a result of `pixels`: its default, 7, while its memory fits the
    /// budget, else 5. Measured with cjxl on a 40 MP picture: about 144 bytes a pixel at effort 7
    /// (5.7 GB), 40 at efforts 1 to 5 (1.6 GB).
    /// - Throws: 422 for a result whose encoding would not fit the budget at any effort.
    static func jpegXLEffort(pixels: Int) throws(ProxyError) -> Int {
        if pixels * 144 <= encoderMemoryBudget { return 7 }
        if pixels * 40 <= encoderMemoryBudget { return 5 }
        throw .unprocessable(
            "a JPEG XL result of \(megapixels(pixels)) MP needs more memory than a job may use "
                + "(at most \(megapixels(encoderMemoryBudget / 40)) MP): ask for a smaller size or another format")
    }

    private static func apply(_ steps: [any ImageTransformer], to image: Image, isCancelled: () -> Bool) throws(ProxyError) -> Image {
        var image = image
        for step in steps {
            try check(isCancelled)
            guard let transformed = step.transform(image, forKey: "") else {
                throw .unprocessable("\(step.transformerKey) cannot apply to a \(image.pixelWidth)x\(image.pixelHeight) image")
            }
            image = transformed
        }
        return image
    }

    static func check(_ isCancelled: () -> Bool) throws(ProxyError) {
        if isCancelled() { throw ProxyError(status: 499, "the processing was cancelled") }
    }

    private static func megapixels(_ pixels: Int) -> String {
        TransformSpec.format(Double(pixels) / 1_000_000)
    }

    /// The status a decoding error answers with.
    static func proxyError(_ error: WebImageError) -> ProxyError {
        switch error.code {
        case .notAnImage: .unsupported("the source is not an image (\(error.detail))")
        case .unsupportedFormat: .unsupported("the source's format cannot be read here (\(error.detail))")
        case .tooLarge: .unprocessable("the source is over a limit: \(error.detail)")
        default: .unprocessable("the source could not be decoded: \(error.detail)")
        }
    }
}

extension WebImageError {
    /// The message, or the code when there is none: what a one-line reason quotes.
    var detail: String { message ?? code.description }
}
