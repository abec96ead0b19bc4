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
    /// Quality for lossy formats when the URL gives none, 1...100.
    let defaultQuality: Int
    /// The bounds of a result and of everything made on the way to it.
    let resultLimits: ProcessingPlan.Limits
    /// Quality by format when the URL gives none, before ``defaultQuality``.
    var formatQuality: [ImageFormat: Int] = [:]

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
    func process(_ data: Data, options: ProcessingOptions, rule: OutputFormatRule, isCancelled: () -> Bool = { false })
        throws(ProxyError) -> (data: Data, format: ImageFormat)
    {
        let header: ImageHeader
        do { header = try ImageHeader(data: data) } catch { throw Self.proxyError(error) }
        guard header.pixelCount <= maximumSourcePixels else {
            throw .unprocessable(
                "the source's \(header.width)x\(header.height) pixels are over the limit of \(Self.megapixels(maximumSourcePixels)) MP")
        }
        let orientation = options.autoRotate ? header.orientation : .up
        let turnsSideways = orientation.swapsDimensions != (options.rotate % 180 != 0)
        let (uprightWidth, uprightHeight) = turnsSideways ? (header.height, header.width) : (header.width, header.height)
        var plan = try ProcessingPlan(options: options, sourceWidth: uprightWidth, sourceHeight: uprightHeight, limits: resultLimits)

        var decodeOptions = DecodeOptions(
            limits: DecodeLimits(maximumPixelCount: maximumSourcePixels), firstFrameOnly: !rule.mayAnimate,
            keepsColorProfile: !options.stripColorProfile, keepsEXIF: !options.stripMetadata)
        if plan.crop == nil, plan.scaledWidth < uprightWidth, plan.scaledHeight < uprightHeight {
            // The decoder scales by its own steps (DCT eighths, whole factors) to at least this
            // box; the plan's transformers go the rest of the way: one resampling at most.
            let (width, height) = turnsSideways ? (plan.scaledHeight, plan.scaledWidth) : (plan.scaledWidth, plan.scaledHeight)
            decodeOptions.thumbnail = ThumbnailSize(width: width, height: height, preservesAspectRatio: false, resamples: false)
        }
        // imgproxy keeps the first frames of a longer animation (one: a still) rather than refusing it.
        decodeOptions.maximumFrames = maximumAnimationFrames
        var image: Image
        do { image = try coders.decode(data, options: decodeOptions) } catch { throw Self.proxyError(error) }
        let transparent = options.background == nil && (image.hasAlpha || options.padding != nil || options.extend)
        let format = rule.resolve(source: header.format, animated: image.frames.count > 1, transparent: transparent)
        if image.frames.count > 1, !OutputFormatRule.animates(format) { image.frames = [image.frames[0]] }
        if !options.autoRotate { image.orientation = .up }
        var steps: [any ImageTransformer] = [OrientationTransformer()]
        if options.rotate != 0 { steps.append(RotationTransformer(degrees: Double(-options.rotate))) }
        if options.flipHorizontally || options.flipVertically {
            steps.append(FlippingTransformer(horizontal: options.flipHorizontally, vertical: options.flipVertically))
        }
        image = try Self.apply(steps, to: image, isCancelled: isCancelled)
        if image.frames.count > 1 {
            // Every frame of an animation is a result of its own: together they keep the limit.
            var perFrame = resultLimits
            perFrame.maximumPixels = max(1, resultLimits.maximumPixels / image.frames.count)
            plan = try ProcessingPlan(options: options, sourceWidth: uprightWidth, sourceHeight: uprightHeight, limits: perFrame)
        }
        steps = plan.transformers(
            options: options, decodedWidth: image.pixelWidth, decodedHeight: image.pixelHeight, sourceWidth: uprightWidth)
        if let background = options.background ?? (format == .jpeg ? .white : nil) {
            steps.append(BackgroundTransformer(color: background))
        }
        image = try Self.apply(steps, to: image, isCancelled: isCancelled)
        try Self.check(isCancelled)
        let quality = Double(options.quality(for: format, defaults: formatQuality, fallback: defaultQuality)) / 100
        var encoding = EncodeOptions(quality: quality)
        if format == .jpegXL {
            encoding.jxlEffort = try Self.jpegXLEffort(pixels: image.pixelWidth * image.pixelHeight * image.frames.count)
        }
        do {
            return (try coders.encode(image, as: format, options: encoding), format)
        } catch {
            throw .unprocessable("the result could not be encoded as \(format.rawValue): \(error.detail)")
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

    private static func check(_ isCancelled: () -> Bool) throws(ProxyError) {
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
