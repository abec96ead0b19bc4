import CGIF
import Foundation

/// A GIF read by giflib (`DGifSlurp`: every frame's palette indices, a quarter of the composed
/// size) and composed frame by frame onto the canvas, with each frame's disposal method and
/// transparency. ``GIFCoder`` takes every frame from it at once; ``AnimatedImageDecoder`` one at
/// a time, on demand.
struct GIFFrameSource: AnimationFrameSource {
    /// The open giflib file and the copy of the bytes it was read from.
    final class File {
        let gif: UnsafeMutablePointer<GifFileType>

        init(_ data: Data) throws(WebImageError) {
            let source = Source(data)
            var status: Int32 = 0
            let context = Unmanaged.passUnretained(source).toOpaque()
            guard
                let gif = DGifOpen(
                    context,
                    { file, buffer, length in
                        guard let file, let buffer, let user = file.pointee.UserData else { return 0 }
                        let source = Unmanaged<Source>.fromOpaque(user).takeUnretainedValue()
                        let count = min(Int(length), source.bytes.count - source.offset)
                        guard count > 0 else { return 0 }
                        source.bytes.copyBytes(
                            to: UnsafeMutableRawBufferPointer(start: buffer, count: count), from: source.offset..<(source.offset + count))
                        source.offset += count
                        return Int32(count)
                    }, &status)
            else {
                throw WebImageError(.decodeFailed, "GIF: \(Self.message(status))")
            }
            self.gif = gif
            // DGifSlurp reads everything now; the source is not needed after it.
            let slurped = withExtendedLifetime(source) { DGifSlurp(gif) }
            // Throwing now still runs deinit, which closes the file: closing it here too would free it twice.
            guard slurped == GIF_OK, gif.pointee.ImageCount > 0 else {
                throw WebImageError(.decodeFailed, "GIF: \(Self.message(gif.pointee.Error))")
            }
        }

        deinit {
            var status: Int32 = 0
            _ = DGifCloseFile(gif, &status)
        }

        static func message(_ code: Int32) -> String {
            GifErrorString(code).map { String(cString: $0) } ?? "error \(code)"
        }
    }

    /// The bytes giflib reads from, through its read callback.
    private final class Source {
        let bytes: Data
        var offset = 0

        init(_ bytes: Data) {
            self.bytes = bytes
        }
    }

    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int
    let durations: [Duration]
    private let file: File
    private var canvas: [UInt8]
    private var position = 0

    /// Opens and reads the file, checking the canvas and each declared frame against `limits`
    /// before giflib reads anything (the composed frames are counted by the caller).
    init(_ data: Data, limits: DecodeLimits) throws(WebImageError) {
        guard data.count >= 13 else { throw WebImageError(.decodeFailed, "GIF: the header is incomplete") }
        let width = Int(data[data.startIndex + 6]) | Int(data[data.startIndex + 7]) << 8
        let height = Int(data[data.startIndex + 8]) | Int(data[data.startIndex + 9]) << 8
        try limits.check(width: width, height: height, inputSize: data.count)
        guard width > 0, height > 0 else { throw WebImageError(.decodeFailed, "GIF canvas is empty") }
        try Self.checkFrames(data, limits: limits)
        file = try File(data)
        canvasWidth = width
        canvasHeight = height
        canvas = [UInt8](repeating: 0, count: width * height * 4)
        let gif = file.gif
        durations = (0..<Int(gif.pointee.ImageCount)).map { index in
            let centiseconds = Int(Self.control(gif, index).DelayTime)
            return centiseconds < 2 ? .milliseconds(100) : .milliseconds(centiseconds * 10)
        }
        loopCount = Self.loopCount(gif)
    }

    /// giflib holds every frame's palette indices (a byte per pixel) from the start, at the size
    /// each frame declares: each must be within the pixel limit, and all of them together within
    /// four times it, the memory the limit allows for the same pixels composed as RGBA.
    private static func checkFrames(_ data: Data, limits: DecodeLimits) throws(WebImageError) {
        var total = 0
        for frame in GIFFrameScan.frameSizes(data) {
            try limits.check(width: frame.width, height: frame.height, inputSize: data.count)
            total += frame.width * frame.height
        }
        let (budget, overflow) = limits.maximumPixelCount.multipliedReportingOverflow(by: 4)
        guard overflow || total <= budget else {
            throw WebImageError(
                .tooLarge, "the frames of this GIF declare \(total) pixels, over four times the \(limits.maximumPixelCount)-pixel limit")
        }
    }

    mutating func rewind() throws(WebImageError) {
        position = 0
        canvas = [UInt8](repeating: 0, count: canvasWidth * canvasHeight * 4)
    }

    /// Draws the next frame, snapshots the canvas, then disposes of the frame as it asks.
    mutating func next() throws(WebImageError) -> PixelBuffer {
        let gif = file.gif
        guard position < durations.count else { throw WebImageError(.decodeFailed, "GIF: no frame \(position)") }
        let control = Self.control(gif, position)
        let saved = gif.pointee.SavedImages[position]
        let previous = control.DisposalMode == DISPOSE_PREVIOUS ? canvas : nil
        let rect = Self.clippedRect(saved.ImageDesc, width: canvasWidth, height: canvasHeight)
        draw(saved, colorMap: saved.ImageDesc.ColorMap ?? gif.pointee.SColorMap, transparent: Int(control.TransparentColor), rect: rect)
        let frame = PixelBuffer(width: canvasWidth, height: canvasHeight, premultipliedRGBA: canvas)
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
        return frame
    }

    private static func control(_ gif: UnsafeMutablePointer<GifFileType>, _ index: Int) -> GraphicsControlBlock {
        var control = GraphicsControlBlock(
            DisposalMode: DISPOSAL_UNSPECIFIED, UserInputFlag: false, DelayTime: 0,
            TransparentColor: NO_TRANSPARENT_COLOR)
        _ = DGifSavedExtensionToGCB(gif, Int32(index), &control)
        return control
    }

    private mutating func draw(
        _ saved: SavedImage, colorMap: UnsafeMutablePointer<ColorMapObject>?, transparent: Int,
        rect: (x: Int, y: Int, width: Int, height: Int)
    ) {
        guard let colorMap, let raster = saved.RasterBits, let colors = colorMap.pointee.Colors else { return }
        // The palette as whole RGBA pixels, so each pixel is one table read and one 4-byte store;
        // a transparent or out-of-palette index is marked by a zero entry (opaque colours never are).
        var palette = [UInt32](repeating: 0, count: 256)
        for index in 0..<min(Int(colorMap.pointee.ColorCount), 256) where index != transparent {
            let color = colors[index]
            palette[index] = UInt32(color.Red) | UInt32(color.Green) << 8 | UInt32(color.Blue) << 16 | 0xFF00_0000
        }
        let sourceWidth = Int(saved.ImageDesc.Width)
        let canvasWidth = canvasWidth
        let offsetX = rect.x - Int(saved.ImageDesc.Left)
        let offsetY = rect.y - Int(saved.ImageDesc.Top)
        palette.withUnsafeBufferPointer { palette in
            canvas.withUnsafeMutableBytes { bytes in
                let pixels = bytes.bindMemory(to: UInt32.self).baseAddress!
                for row in 0..<rect.height {
                    let source = raster + (row + offsetY) * sourceWidth + offsetX
                    let target = pixels + (rect.y + row) * canvasWidth + rect.x
                    for column in 0..<rect.width {
                        let color = palette[Int(source[column])]
                        if color != 0 { target[column] = color.littleEndian }
                    }
                }
            }
        }
    }

    /// The part of a frame's rectangle that lies on the canvas.
    private static func clippedRect(_ descriptor: GifImageDesc, width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let left = max(0, min(Int(descriptor.Left), width))
        let top = max(0, min(Int(descriptor.Top), height))
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
}
