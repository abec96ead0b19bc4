import Foundation

/// An incremental decoder whose partial images are converted to sRGB as ``CodersManager/decode(_:options:)``
/// converts the whole image, from the profile in the bytes so far (a JPEG's, PNG's or WebP's
/// colour metadata comes before its pixels), so the last partial image is the final one.
final class ColorManagedIncrementalDecoder: IncrementalImageDecoder {
    private let inner: any IncrementalImageDecoder
    private let format: ImageFormat
    private let options: DecodeOptions

    init(_ inner: any IncrementalImageDecoder, format: ImageFormat, options: DecodeOptions) {
        self.inner = inner
        self.format = format
        self.options = options
    }

    func update(_ data: Data) -> Image? {
        guard var image = inner.update(data) else { return nil }
        CodersManager.applyMetadata(SourceMetadata(data, format: format), to: &image, options: options)
        return image
    }
}

/// An animated image provider whose frames are converted to sRGB from the file's colour profile, unless
/// the decode keeps the profile.
final class ColorManagedAnimatedProvider: AnimatedImageProvider {
    private let inner: any AnimatedImageProvider
    private let transform: ColorManagement.Transform

    /// The provider itself when its file needs no conversion.
    static func wrapping(_ inner: any AnimatedImageProvider, data: Data, format: ImageFormat, options: DecodeOptions)
        -> any AnimatedImageProvider
    {
        guard !options.keepsColorProfile, let colorSpace = SourceMetadata(data, format: format).colorSpace,
            let profile = ColorManagement.profileData(colorSpace),
            case .transform(let transform) = ColorManagement.cache.conversion(for: profile)
        else { return inner }
        return ColorManagedAnimatedProvider(inner, transform: transform)
    }

    private init(_ inner: any AnimatedImageProvider, transform: ColorManagement.Transform) {
        self.inner = inner
        self.transform = transform
    }

    var frameCount: Int { inner.frameCount }
    var loopCount: Int { inner.loopCount }
    func duration(at index: Int) -> Duration { inner.duration(at: index) }
    func frame(at index: Int) throws(WebImageError) -> PixelBuffer { transform.apply(to: try inner.frame(at: index)) }
}
