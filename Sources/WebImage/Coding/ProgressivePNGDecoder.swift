public import Foundation
import CWebImageCodecs

/// Partial images of a PNG download through libpng's progressive reader (in the C shim): the rows
/// received so far, the rest transparent; an interlaced PNG shows after each complete Adam7 pass,
/// its missing pixels still transparent.
public final class ProgressivePNGDecoder: ProgressiveImageCoder {
    private let options: DecodeOptions
    /// Rows or passes shown so far.
    private let shown = Locked((rows: 0, passes: 0))

    /// A decoder for one download.
    public init(options: DecodeOptions = DecodeOptions()) {
        self.options = options
    }

    public func update(_ data: Data) -> Image? {
        data.withUnsafeBytes { bytes -> Image? in
            let source = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
            var header = cwi_header_info()
            guard cwi_png_read_header(source, bytes.count, &header) == 0,
                  (try? options.limits.check(width: Int(header.width), height: Int(header.height), inputSize: bytes.count)) != nil else { return nil }
            let width = Int(header.width), height = Int(header.height)
            var rows: Int32 = 0, passes: Int32 = 0
            var status: Int32 = -1
            let straight = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, initialized in
                buffer.initialize(repeating: 0)
                initialized = buffer.count
                status = cwi_png_decode_partial(source, bytes.count, buffer.baseAddress, buffer.count, header.width, header.height, &rows, &passes)
            }
            let isNew = shown.withLock { shown -> Bool in
                guard status == 0, Int(rows) > shown.rows || Int(passes) > shown.passes else { return false }
                shown = (Int(rows), Int(passes))
                return true
            }
            guard isNew else { return nil }
            let image = Image(pixels: PixelBuffer(width: width, height: height, straightRGBA: straight), scale: options.scale,
                              sourceFormat: .png, hasAlpha: true)
            return CodersManager.fitted(image, into: options.thumbnail)
        }
    }
}
