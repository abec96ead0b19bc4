/// Resizes to a pixel size (SDWebImage's `SDImageResizingTransformer`).
///
/// Key: `resize:WxH:MODE:FILTER`, for example `resize:300x200:aspectfill:lanczos3`.
public struct ResizingTransformer: ImageTransformer, Hashable {
    /// Target width in pixels.
    public var width: Int
    /// Target height in pixels.
    public var height: Int
    /// How the image fits the size. Default ``ResizeMode/fill``.
    public var mode: ResizeMode
    /// The resampling kernel. Default ``ResamplingFilter/lanczos3``.
    public var filter: ResamplingFilter

    /// Creates a resize; sizes below 1 are raised to 1.
    public init(width: Int, height: Int, mode: ResizeMode = .fill, filter: ResamplingFilter = .lanczos3) {
        self.width = max(1, width)
        self.height = max(1, height)
        self.mode = mode
        self.filter = filter
    }

    public var transformerKey: String { "resize:\(width)x\(height):\(mode.rawValue):\(filter.rawValue)" }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        image.mappingFrames(resize)
    }

    func resize(_ pixels: PixelBuffer) -> PixelBuffer {
        switch mode {
        case .fill:
            return Resampler.resize(pixels, width: width, height: height, filter: filter)
        case .aspectFit:
            let scale = min(Double(width) / Double(pixels.width), Double(height) / Double(pixels.height))
            let fitted = (max(1, Int((Double(pixels.width) * scale).rounded())), max(1, Int((Double(pixels.height) * scale).rounded())))
            return Resampler.resize(pixels, width: min(fitted.0, width), height: min(fitted.1, height), filter: filter)
        case .aspectFill:
            let cropped = CenterCropTransformer(aspectWidth: width, aspectHeight: height).crop(pixels)
            return Resampler.resize(cropped, width: width, height: height, filter: filter)
        }
    }
}
