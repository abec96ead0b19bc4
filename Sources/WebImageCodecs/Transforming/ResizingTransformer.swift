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
    /// The part of a ``ResizeMode/fill`` resize that is kept, when a cut follows the resize
    /// (the proxy's `fill`): only that part is computed. Nil keeps all.
    package var window: ResizeWindow?

    /// Creates a resize; sizes below 1 are raised to 1.
    public init(width: Int, height: Int, mode: ResizeMode = .fill, filter: ResamplingFilter = .lanczos3) {
        self.width = max(1, width)
        self.height = max(1, height)
        self.mode = mode
        self.filter = filter
    }

    /// A ``ResizeMode/fill`` resize to `width` x `height` of which only `window` is made: the
    /// resize and the crop that follows it in one step.
    package init(width: Int, height: Int, keeping window: ResizeWindow, filter: ResamplingFilter = .lanczos3) {
        self.init(width: width, height: height, mode: .fill, filter: filter)
        self.window = window
    }

    public var transformerKey: String {
        let kept = window.map { "@\($0.columns.lowerBound),\($0.rows.lowerBound)+\($0.columns.count)x\($0.rows.count)" } ?? ""
        return "resize:\(width)x\(height):\(mode.rawValue):\(filter.rawValue)\(kept)"
    }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        image.mappingFrames(keepingHighBitDepth: true, resize)
    }

    /// The resized pixels, or nil when the result is over ``PixelBuffer/maximumPixelCount``.
    func resize(_ pixels: PixelBuffer) -> PixelBuffer? {
        switch mode {
        case .fill:
            return try? Resampler.resize(pixels, width: width, height: height, window: window, filter: filter)
        case .aspectFit:
            let scale = min(Double(width) / Double(pixels.width), Double(height) / Double(pixels.height))
            let fitted = (max(1, Int((Double(pixels.width) * scale).rounded())), max(1, Int((Double(pixels.height) * scale).rounded())))
            return try? Resampler.resize(pixels, width: min(fitted.0, width), height: min(fitted.1, height), filter: filter)
        case .aspectFill:
            let cropped = CenterCropTransformer(aspectWidth: width, aspectHeight: height).crop(pixels)
            return try? Resampler.resize(cropped, width: width, height: height, filter: filter)
        }
    }
}

/// The part of a resize's output that is kept: its columns and rows, within the resized size.
package struct ResizeWindow: Hashable, Sendable {
    /// The columns kept.
    package var columns: Range<Int>
    /// The rows kept.
    package var rows: Range<Int>

    /// A window of `width` x `height` pixels from (`x`, `y`).
    package init(x: Int, y: Int, width: Int, height: Int) {
        columns = x..<x + width
        rows = y..<y + height
    }

    init(columns: Range<Int>, rows: Range<Int>) {
        self.columns = columns
        self.rows = rows
    }
}
