public import Foundation
import CWebP

/// Partial images of a WebP download through libwebp's incremental decoder: the rows decoded so
/// far, the rest transparent, each time more rows are ready. Animated WebP shows nothing until
/// complete.
public final class ProgressiveWebPDecoder: ProgressiveImageCoder {
    private let options: DecodeOptions
    private let shownRows = Locked(0)

    /// A decoder for one download.
    public init(options: DecodeOptions = DecodeOptions()) {
        self.options = options
    }

    public func update(_ data: Data) -> Image? {
        data.withUnsafeBytes { bytes -> Image? in
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
            var features = WebPBitstreamFeatures()
            guard WebPGetFeatures(base, bytes.count, &features) == VP8_STATUS_OK, features.has_animation == 0,
                  (try? options.limits.check(width: Int(features.width), height: Int(features.height), inputSize: bytes.count)) != nil,
                  let decoder = WebPINewRGB(MODE_RGBA, nil, 0, 0) else { return nil }
            defer { WebPIDelete(decoder) }
            let status = WebPIUpdate(decoder, base, bytes.count)
            guard status == VP8_STATUS_OK || status == VP8_STATUS_SUSPENDED else { return nil }
            var lastRow: Int32 = 0, width: Int32 = 0, height: Int32 = 0, stride: Int32 = 0
            guard let rows = WebPIDecGetRGB(decoder, &lastRow, &width, &height, &stride), lastRow > 0 else { return nil }
            let isNew = shownRows.withLock { shown -> Bool in
                guard Int(lastRow) > shown else { return false }
                shown = Int(lastRow)
                return true
            }
            guard isNew else { return nil }
            var straight = [UInt8](repeating: 0, count: Int(width) * Int(height) * 4)
            for row in 0..<Int(lastRow) {
                let source = UnsafeBufferPointer(start: rows + row * Int(stride), count: Int(width) * 4)
                straight.replaceSubrange(row * Int(width) * 4 ..< (row + 1) * Int(width) * 4, with: source)
            }
            let image = Image(pixels: PixelBuffer(width: Int(width), height: Int(height), straightRGBA: straight), scale: options.scale,
                              sourceFormat: .webP, hasAlpha: true)
            return CodersManager.fitted(image, into: options.thumbnail)
        }
    }
}
