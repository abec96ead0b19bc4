import CGIF
import Foundation

/// A GIF read by ``GIFRecordReader`` (every frame's palette indices, a quarter of the composed
/// size) and composed frame by frame onto the canvas, with each frame's disposal method and
/// transparency. ``GIFCoder`` takes every frame from it at once; ``AnimatedImageDecoder`` one at
/// a time, on demand.
struct GIFFrameSource: AnimationFrameSource {
    /// The palette of a frame with neither a local nor a global colour table: a grey ramp, as
    /// Pillow reads such a file.
    private static let greyRamp: [UInt32] = (0..<256).map { UInt32($0) * 0x0001_0101 | 0xFF00_0000 }

    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int
    let durations: [Duration]
    let warnings: [String]
    let isPartial: Bool
    private let file: GIFRecordReader
    private var canvas: [UInt8]
    private var position = 0

    /// Opens and reads the file, checking the canvas against `limits` first and each frame as
    /// its descriptor is read, before its pixels are (the composed frames are counted by the
    /// caller).
    init(_ data: Data, limits: DecodeLimits, acceptTruncated: Bool = false) throws(WebImageError) {
        guard data.count >= 13 else { throw WebImageError(.decodeFailed, "GIF: the header is incomplete") }
        let width = Int(data[data.startIndex + 6]) | Int(data[data.startIndex + 7]) << 8
        let height = Int(data[data.startIndex + 8]) | Int(data[data.startIndex + 9]) << 8
        try limits.check(width: width, height: height, inputSize: data.count)
        guard width > 0, height > 0 else { throw WebImageError(.decodeFailed, "GIF canvas is empty") }
        file = try GIFRecordReader(data, limits: limits, acceptTruncated: acceptTruncated)
        canvasWidth = width
        canvasHeight = height
        canvas = try PixelBuffer.zeroedBytes(width: width, height: height)
        durations = file.frames.map { frame in
            let centiseconds = Int(frame.control.DelayTime)
            return centiseconds < 2 ? .milliseconds(100) : .milliseconds(centiseconds * 10)
        }
        loopCount = file.loopCount
        warnings = file.warnings
        isPartial = file.isPartial
    }

    mutating func rewind() throws(WebImageError) {
        position = 0
        canvas = try PixelBuffer.zeroedBytes(width: canvasWidth, height: canvasHeight)
    }

    /// Draws the next frame, snapshots the canvas, then disposes of the frame as it asks.
    mutating func next() throws(WebImageError) -> PixelBuffer {
        guard position < file.frames.count else { throw WebImageError(.decodeFailed, "GIF: no frame \(position)") }
        let frame = file.frames[position]
        let control = frame.control
        let previous = control.DisposalMode == DISPOSE_PREVIOUS ? canvas : nil
        let rect = Self.clippedRect(frame, width: canvasWidth, height: canvasHeight)
        draw(frame, palette: frame.palette ?? file.globalPalette ?? Self.greyRamp, transparent: Int(control.TransparentColor), rect: rect)
        let composed = PixelBuffer(width: canvasWidth, height: canvasHeight, straightRGBA: canvas)
        switch control.DisposalMode {
        case DISPOSE_BACKGROUND:
            for y in rect.y..<(rect.y + rect.height) {
                let start = (y * canvasWidth + rect.x) * 4
                canvas.replaceSubrange(start..<(start + rect.width * 4), with: repeatElement(0, count: rect.width * 4))
            }
        case DISPOSE_PREVIOUS:
            if let previous { canvas = previous }
        default:
            break
        }
        position += 1
        return composed
    }

    private mutating func draw(
        _ frame: GIFRecordReader.Frame, palette colors: [UInt32], transparent: Int, rect: (x: Int, y: Int, width: Int, height: Int)
    ) {
        // The palette as whole RGBA pixels, so each pixel is one table read and one 4-byte store;
        // a transparent or out-of-palette index is marked by a zero entry (opaque colours never are).
        var palette = [UInt32](repeating: 0, count: 256)
        for index in colors.indices where index != transparent { palette[index] = colors[index] }
        let sourceWidth = frame.width
        let canvasWidth = canvasWidth
        let offsetX = rect.x - frame.left
        let offsetY = rect.y - frame.top
        palette.withUnsafeBufferPointer { palette in
            frame.indices.withUnsafeBufferPointer { indices in
                canvas.withUnsafeMutableBytes { bytes in
                    let pixels = bytes.bindMemory(to: UInt32.self).baseAddress!
                    for row in 0..<rect.height where frame.decodedRows?[row + offsetY] ?? true {
                        let source = indices.baseAddress! + (row + offsetY) * sourceWidth + offsetX
                        let target = pixels + (rect.y + row) * canvasWidth + rect.x
                        for column in 0..<rect.width {
                            let color = palette[Int(source[column])]
                            if color != 0 { target[column] = color.littleEndian }
                        }
                    }
                }
            }
        }
    }

    /// The part of a frame's rectangle that lies on the canvas.
    private static func clippedRect(_ frame: GIFRecordReader.Frame, width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let left = max(0, min(frame.left, width))
        let top = max(0, min(frame.top, height))
        let right = max(left, min(frame.left + frame.width, width))
        let bottom = max(top, min(frame.top + frame.height, height))
        return (left, top, right - left, bottom - top)
    }
}
