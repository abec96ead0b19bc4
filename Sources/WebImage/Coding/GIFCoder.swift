public import Foundation
import CGIF

/// GIF through giflib: every frame composed onto the canvas with its disposal method and
/// transparency, frame delays by SDWebImage's rule (under 0.011 s becomes 0.1 s), the loop count
/// from the NETSCAPE2.0 extension (1 when absent), and first-frame-only decoding. A file that
/// ends early is a ``WebImageError/Code/decodeFailed``. The canvas size is checked against the
/// limits before any frame is read, and all frames together count toward the pixel budget.
/// Encodes still and animated GIFs with giflib's quantiser.
public struct GIFCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .gif }

    public func canEncode(to format: ImageFormat) -> Bool { format == .gif }

    /// Encodes a still or animated GIF (see `GIFEncoder`); the quality option does not apply.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        guard format == .gif else { throw WebImageError(.unsupportedFormat, "GIFCoder encodes only GIF") }
        return try GIFEncoder.encode(image)
    }

    public func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        try data.withTypedBytes { bytes throws(WebImageError) in try decode(bytes, options: options) }
    }

    /// The bytes giflib reads from, through its read callback.
    private final class Source {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        init(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }
    }

    private func decode(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions) throws(WebImageError) -> Image {
        let source = Source(bytes)
        var status: Int32 = 0
        let context = Unmanaged.passUnretained(source).toOpaque()
        guard let gif = DGifOpen(context, { file, buffer, length in
            guard let file, let buffer, let user = file.pointee.UserData else { return 0 }
            let source = Unmanaged<Source>.fromOpaque(user).takeUnretainedValue()
            let count = min(Int(length), source.bytes.count - source.offset)
            guard count > 0 else { return 0 }
            buffer.update(from: source.bytes.baseAddress!.advanced(by: source.offset).assumingMemoryBound(to: UInt8.self), count: count)
            source.offset += count
            return Int32(count)
        }, &status) else {
            throw WebImageError(.decodeFailed, "GIF: \(Self.message(status))")
        }
        defer { withExtendedLifetime(source) { _ = DGifCloseFile(gif, &status) } }
        let width = Int(gif.pointee.SWidth), height = Int(gif.pointee.SHeight)
        try options.limits.check(width: width, height: height, inputSize: bytes.count)
        guard width > 0, height > 0 else { throw WebImageError(.decodeFailed, "GIF canvas is empty") }
        guard DGifSlurp(gif) == GIF_OK, gif.pointee.ImageCount > 0 else {
            throw WebImageError(.decodeFailed, "GIF: \(Self.message(gif.pointee.Error))")
        }
        let frameCount = options.firstFrameOnly ? 1 : Int(gif.pointee.ImageCount)
        try options.limits.check(width: width, height: height * frameCount, inputSize: bytes.count)
        let frames = compose(gif, width: width, height: height, frameCount: frameCount)
        return Image(frames: frames, loopCount: Self.loopCount(gif), scale: options.scale, sourceFormat: .gif,
                     hasAlpha: frames.contains { !$0.pixels.isOpaque })
    }

    /// Draws each frame onto the canvas, snapshots it, then disposes of the frame as it asks.
    private func compose(_ gif: UnsafeMutablePointer<GifFileType>, width: Int, height: Int, frameCount: Int) -> [ImageFrame] {
        var canvas = [UInt8](repeating: 0, count: width * height * 4)
        var frames: [ImageFrame] = []
        for index in 0..<frameCount {
            var control = GraphicsControlBlock(DisposalMode: DISPOSAL_UNSPECIFIED, UserInputFlag: false, DelayTime: 0,
                                               TransparentColor: NO_TRANSPARENT_COLOR)
            _ = DGifSavedExtensionToGCB(gif, Int32(index), &control)
            let saved = gif.pointee.SavedImages[index]
            let previous = control.DisposalMode == DISPOSE_PREVIOUS ? canvas : nil
            let rect = Self.clippedRect(saved.ImageDesc, width: width, height: height)
            draw(saved, colorMap: saved.ImageDesc.ColorMap ?? gif.pointee.SColorMap, transparent: Int(control.TransparentColor),
                 rect: rect, onto: &canvas, canvasWidth: width)
            let centiseconds = Int(control.DelayTime)
            let delay: Duration = centiseconds < 2 ? .milliseconds(100) : .milliseconds(centiseconds * 10)
            frames.append(ImageFrame(pixels: PixelBuffer(width: width, height: height, premultipliedRGBA: canvas), duration: delay))
            switch control.DisposalMode {
            case DISPOSE_BACKGROUND:
                for y in rect.y..<(rect.y + rect.height) {
                    let start = (y * width + rect.x) * 4
                    canvas.replaceSubrange(start..<(start + rect.width * 4), with: repeatElement(0, count: rect.width * 4))
                }
            case DISPOSE_PREVIOUS:
                if let previous { canvas = previous }
            default:
                break
            }
        }
        return frames
    }

    private func draw(
        _ saved: SavedImage, colorMap: UnsafeMutablePointer<ColorMapObject>?, transparent: Int,
        rect: (x: Int, y: Int, width: Int, height: Int), onto canvas: inout [UInt8], canvasWidth: Int
    ) {
        guard let colorMap, let raster = saved.RasterBits, let colors = colorMap.pointee.Colors else { return }
        let colorCount = Int(colorMap.pointee.ColorCount)
        let sourceWidth = Int(saved.ImageDesc.Width)
        let offsetX = rect.x - Int(saved.ImageDesc.Left), offsetY = rect.y - Int(saved.ImageDesc.Top)
        canvas.withUnsafeMutableBufferPointer { pixels in
            for row in 0..<rect.height {
                for column in 0..<rect.width {
                    let index = Int(raster[(row + offsetY) * sourceWidth + column + offsetX])
                    guard index != transparent, index < colorCount else { continue }
                    let color = colors[index]
                    let target = ((rect.y + row) * canvasWidth + rect.x + column) * 4
                    pixels[target] = color.Red
                    pixels[target + 1] = color.Green
                    pixels[target + 2] = color.Blue
                    pixels[target + 3] = 255
                }
            }
        }
    }

    /// The part of a frame's rectangle that lies on the canvas.
    private static func clippedRect(_ descriptor: GifImageDesc, width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let left = max(0, min(Int(descriptor.Left), width)), top = max(0, min(Int(descriptor.Top), height))
        let right = max(left, min(Int(descriptor.Left) + Int(descriptor.Width), width))
        let bottom = max(top, min(Int(descriptor.Top) + Int(descriptor.Height), height))
        return (left, top, right - left, bottom - top)
    }

    /// The NETSCAPE2.0 loop count (0 = forever), or 1 when the file has none.
    private static func loopCount(_ gif: UnsafeMutablePointer<GifFileType>) -> Int {
        var blocks: [ExtensionBlock] = []
        for index in 0..<Int(gif.pointee.ImageCount) {
            let saved = gif.pointee.SavedImages[index]
            for block in 0..<Int(saved.ExtensionBlockCount) { blocks.append(saved.ExtensionBlocks[block]) }
        }
        for block in 0..<Int(gif.pointee.ExtensionBlockCount) { blocks.append(gif.pointee.ExtensionBlocks[block]) }
        for (position, block) in blocks.enumerated() where block.Function == APPLICATION_EXT_FUNC_CODE && block.ByteCount == 11 {
            let name = String(decoding: UnsafeBufferPointer(start: block.Bytes, count: 11), as: UTF8.self)
            guard name == "NETSCAPE2.0" || name == "ANIMEXTS1.0", position + 1 < blocks.count else { continue }
            let data = blocks[position + 1]
            guard data.ByteCount >= 3, let bytes = data.Bytes, bytes[0] == 1 else { continue }
            return Int(bytes[1]) | Int(bytes[2]) << 8
        }
        return 1
    }

    private static func message(_ code: Int32) -> String {
        GifErrorString(code).map { String(cString: $0) } ?? "error \(code)"
    }
}
