public import Foundation

/// An ordered list of coders that dispatches on the sniffed format (SDWebImage's
/// `SDImageCodersManager`): the coder added last wins, so an application's coder overrides a
/// built-in one for the same format.
public final class CodersManager: Sendable {
    /// The built-in coders.
    public static let shared = CodersManager()

    private let coders: Locked<[any ImageCoder]>

    /// The built-in coders, one per format family, in the order a new manager holds them: PNG
    /// (and APNG), JPEG, GIF, WebP, AVIF, BMP (and ICO), TIFF, HEIF, JPEG XL, SVG, and with the
    /// package's `Video` trait the video coder (MP4, QuickTime, WebM). A manager of a few of them
    /// is these, filtered by ``ImageCoder/canDecode(_:)``.
    public static let builtInCoders: [any ImageCoder] =
        [
            PNGCoder(), JPEGCoder(), GIFCoder(), WebPCoder(), AVIFCoder(), BMPCoder(), TIFFCoder(), HEIFCoder(), JXLCoder(), SVGCoder(),
        ] + videoCoders

    #if Video
    private static let videoCoders: [any ImageCoder] = [VideoCoder()]
    #else
    private static let videoCoders: [any ImageCoder] = []
    #endif

    /// A manager with the given coders, the last one preferred; by default the built-in ones.
    public init(coders: [any ImageCoder] = CodersManager.builtInCoders) {
        self.coders = Locked(coders)
    }

    /// Adds a coder ahead of every coder already there.
    public func add(_ coder: any ImageCoder) {
        coders.withLock { $0.append(coder) }
    }

    /// The coders, the preferred one last.
    public var all: [any ImageCoder] {
        coders.withLock { $0 }
    }

    /// The formats some coder here decodes, in ``ImageFormat``'s order.
    public var decodableFormats: [ImageFormat] {
        let coders = all
        return ImageFormat.allCases.filter { format in coders.contains { $0.canDecode(format) } }
    }

    /// An `Accept` header that names exactly the formats these coders decode, then any other
    /// image at a lower preference: `image/jpeg,image/png,image/gif,image/tiff,image/webp,image/heic,image/heif,image/svg+xml,image/avif,image/bmp,image/x-icon,image/jxl,image/*;q=0.8`
    /// with the built-in coders. A negotiating CDN serves a format such as AVIF only when it is
    /// named, so naming one no coder decodes would make every such image fail to decode; a
    /// plugin coder for a new format adds its media type here. The video formats are left out
    /// (a negotiating server would answer an image's URL with a video).
    public var acceptHeader: String {
        (decodableFormats.filter { !$0.isVideo }.map(\.mimeType) + ["image/*;q=0.8"]).joined(separator: ",")
    }

    /// Decodes `data` with the newest coder for its format.
    ///
    /// - Throws: `WebImageError.Code.notAnImage` when no format is recognised,
    ///   `WebImageError.Code.unsupportedFormat` when no coder handles it, or the coder's error.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws(WebImageError) -> Image {
        guard let format = ImageFormat(sniffing: data) else {
            throw WebImageError(.notAnImage, "no image signature in \(data.count) bytes")
        }
        guard let coder = newest(for: format) else {
            throw WebImageError(.unsupportedFormat, "no coder decodes \(format.rawValue)")
        }
        var options = options
        let limit = options.scaleDownLimitBytes ?? (options.scaleDownLargeImages ? Self.scaleDownLimitBytes : nil)
        if let limit, options.thumbnail == nil, let header = try? ImageHeader(data: data) {
            options.thumbnail = Self.scaledDownSize(width: header.width, height: header.height, limitBytes: limit)
        }
        var image = Self.fitted(try coder.decode(data, options: options), into: options.thumbnail)
        Self.applyMetadata(SourceMetadata(data, format: format), to: &image, options: options)
        return image
    }

    /// Converts to sRGB (or keeps the profile) and keeps EXIF, as `options` say; takes the EXIF's
    /// orientation.
    static func applyMetadata(_ metadata: SourceMetadata, to image: inout Image, options: DecodeOptions) {
        if let colorSpace = metadata.colorSpace {
            if options.keepsColorProfile {
                image.colorProfile = ColorManagement.profileData(colorSpace)
            } else {
                ColorManagement.convertToSRGB(&image, from: colorSpace)
            }
        }
        if options.keepsEXIF { image.exif = metadata.exif }
        if image.sourceColor == nil { image.sourceColor = metadata.colorDescription }
        // A PNG's or WebP's EXIF orientation, which their decoders do not read.
        if image.orientation == .up, let orientation = metadata.orientation { image.orientation = orientation }
    }

    /// An animation decoded on demand (GIF, APNG or animated WebP with the built-in coders),
    /// keeping at most `maximumBufferedFrames` composed frames; nil for a still image or a
    /// format whose newest coder has no ``AnimatedImageCoder``.
    /// - Throws: the coder's error when the file is an animation that cannot be read.
    public func animatedImageProvider(for data: Data, options: DecodeOptions = DecodeOptions(), maximumBufferedFrames: Int = 4)
        throws(WebImageError) -> (any AnimatedImageProvider)?
    {
        guard let format = ImageFormat(sniffing: data), let coder = newest(for: format) as? any AnimatedImageCoder else { return nil }
        guard
            let animated = try coder.animatedImageProvider(
                for: data, format: format, options: options, maximumBufferedFrames: maximumBufferedFrames)
        else { return nil }
        return ColorManagedAnimatedProvider.wrapping(animated, data: data, format: format, options: options)
    }

    /// A decoder for one download whose first bytes are `data`, showing partial images as more
    /// arrive: JPEG (scan by scan, or rows), PNG (rows, or Adam7 passes) and WebP (rows) with the
    /// built-in coders; nil for a format whose newest coder has no ``ProgressiveImageCoder``.
    public func incrementalDecoder(for data: Data, options: DecodeOptions = DecodeOptions()) -> (any IncrementalImageDecoder)? {
        guard let format = ImageFormat(sniffing: data), let coder = newest(for: format) as? any ProgressiveImageCoder else { return nil }
        guard let progressive = coder.incrementalDecoder(for: format, options: options) else { return nil }
        return SourceMetadata.formats.contains(format)
            ? ColorManagedIncrementalDecoder(progressive, format: format, options: options) : progressive
    }

    /// The coder added last that decodes `format`.
    private func newest(for format: ImageFormat) -> (any ImageCoder)? {
        all.last { $0.canDecode(format) }
    }

    /// The largest bitmap `.scaleDownLargeImages` lets a decode make: 60 MB, SDWebImage's figure.
    /// ``DecodeOptions/scaleDownLimitBytes`` sets another for one decode.
    public static let scaleDownLimitBytes = 60 * 1024 * 1024

    /// The size that keeps a width × height image's RGBA bitmap within `limitBytes`, or nil when
    /// it already fits: the largest halving (1/2, 1/4, ...) that fits, so that a JPEG decodes
    /// straight to it in the DCT and other formats resample by a clean factor.
    static func scaledDownSize(width: Int, height: Int, limitBytes: Int = scaleDownLimitBytes) -> ThumbnailSize? {
        let limit = max(1, limitBytes / 4)
        guard width * height > limit else { return nil }
        var divisor = 2
        while ((width + divisor - 1) / divisor) * ((height + divisor - 1) / divisor) > limit { divisor *= 2 }
        return ThumbnailSize(width: (width + divisor - 1) / divisor, height: (height + divisor - 1) / divisor)
    }

    /// A codec scales by its own steps (JPEG by eighths), so it may stop above the thumbnail:
    /// resample the rest of the way, never enlarging. With the aspect ratio kept the image fits
    /// inside the size; otherwise it is the size exactly. A thumbnail that does not resample
    /// leaves the decoder's step as it is.
    static func fitted(_ image: Image, into thumbnail: ThumbnailSize?) -> Image {
        guard let thumbnail, thumbnail.resamples, thumbnail.width > 0, thumbnail.height > 0,
            image.pixelWidth > thumbnail.width || image.pixelHeight > thumbnail.height
        else { return image }
        let mode: ResizeMode = thumbnail.preservesAspectRatio ? .aspectFit : .fill
        let resizer = ResizingTransformer(
            width: min(thumbnail.width, image.pixelWidth), height: min(thumbnail.height, image.pixelHeight), mode: mode)
        return resizer.transform(image, forKey: "") ?? image
    }

    /// Whether the newest coder for `format` writes 16-bit pixels at a high bit depth
    /// (``HighBitDepthEncoding``): a result in that format can keep them.
    package func encodesHighBitDepth(to format: ImageFormat) -> Bool {
        all.last(where: { $0.canEncode(to: format) }) is any HighBitDepthEncoding
    }

    /// Encodes `image` as `format` with the newest coder for it, with the image's colour profile,
    /// EXIF and orientation written into the file where the format has room for them
    /// (`MetadataWriter`).
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws(WebImageError) -> Data {
        guard let coder = all.last(where: { $0.canEncode(to: format) }) else {
            throw WebImageError(.unsupportedFormat, "no coder encodes \(format.rawValue)")
        }
        // A coder that cannot write 16-bit samples gets the 8-bit picture (PQ and HLG tone-mapped).
        let image = coder is any HighBitDepthEncoding ? image : image.reducedToEightBits()
        guard let maximum = options.maximumFileSize, !options.lossless, format == .jpeg || format == .webP else {
            return try MetadataWriter.embed(image, in: coder.encode(image, as: format, options: options), format: format)
        }
        return try encode(image, as: format, options: options, by: coder, fittingIn: maximum)
    }

    /// SDWebImage's `encodeMaxFileSize`: the highest whole-percent quality up to the asked one
    /// whose file fits in `maximum` bytes, by bisection (at most 7 encodes for 100 qualities);
    /// the lowest quality's file when none fits.
    private func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions, by coder: any ImageCoder, fittingIn maximum: Int)
        throws(WebImageError) -> Data
    {
        func attempt(_ percent: Int) throws(WebImageError) -> Data {
            var attempt = options
            attempt.quality = Double(percent) / 100
            return try MetadataWriter.embed(image, in: coder.encode(image, as: format, options: attempt), format: format)
        }
        var high = max(1, Int((options.quality * 100).rounded()))
        let asked = try attempt(high)
        guard asked.count > maximum, high > 1 else { return asked }
        var low = 1
        var fitting: Data?
        // When nothing fits, the search ends by trying quality 1: that file is the answer.
        var lowest: Data?
        high -= 1
        while low <= high {
            let middle = (low + high) / 2
            let candidate = try attempt(middle)
            if candidate.count <= maximum {
                fitting = candidate
                low = middle + 1
            } else {
                if middle == 1 { lowest = candidate }
                high = middle - 1
            }
        }
        return fitting ?? lowest ?? asked
    }
}
