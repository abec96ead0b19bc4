import CGIF
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Writes GIFs with giflib: each frame quantised to a local palette of at most 255 colours by
/// giflib's median-cut quantiser, pixels under half opacity mapped to a transparent index 255,
/// each frame a full canvas cleared before the next (disposal "background"), delays in
/// centiseconds, and a NETSCAPE2.0 loop count for animations.
enum GIFEncoder {
    /// Collects what giflib writes.
    private final class Sink {
        var bytes = Data()
    }

    private static let transparentIndex = 255

    static func encode(_ image: Image) throws(WebImageError) -> Data {
        let sink = Sink()
        var status: Int32 = 0
        let context = Unmanaged.passUnretained(sink).toOpaque()
        guard
            let gif = EGifOpen(
                context,
                { file, bytes, length in
                    guard let file, let bytes, let user = file.pointee.UserData else { return 0 }
                    Unmanaged<Sink>.fromOpaque(user).takeUnretainedValue().bytes.append(bytes, count: Int(length))
                    return length
                }, &status)
        else {
            throw WebImageError(.encodeFailed, "giflib could not start: error \(status)")
        }
        gif.pointee.SWidth = Int32(image.pixelWidth)
        gif.pointee.SHeight = Int32(image.pixelHeight)
        gif.pointee.SColorResolution = 8
        gif.pointee.SBackGroundColor = 0
        do throws(WebImageError) {
            for (index, frame) in image.frames.enumerated() {
                try addFrame(frame, index: index, isAnimated: image.isAnimated, to: gif)
            }
            if image.isAnimated { try addLoopCount(image.loopCount, to: gif) }
        } catch {
            _ = EGifCloseFile(gif, &status)
            throw error
        }
        EGifSetGifVersion(gif, true)
        // EGifSpew writes everything and closes the file, on success and on failure.
        guard withExtendedLifetime(sink, { EGifSpew(gif) }) == GIF_OK else {
            throw WebImageError(.encodeFailed, "giflib could not write the GIF")
        }
        return sink.bytes
    }

    private static func addFrame(_ frame: ImageFrame, index: Int, isAnimated: Bool, to gif: UnsafeMutablePointer<GifFileType>)
        throws(WebImageError)
    {
        let pixels = frame.pixels
        let count = pixels.width * pixels.height
        let straight = pixels.straightRGBA()
        var red = [UInt8](repeating: 0, count: count)
        var green = red
        var blue = red
        for pixel in 0..<count {
            red[pixel] = straight[pixel * 4]
            green[pixel] = straight[pixel * 4 + 1]
            blue[pixel] = straight[pixel * 4 + 2]
        }
        var colorCount: Int32 = 255
        var palette = [GifColorType](repeating: GifColorType(), count: 256)
        guard let raster = malloc(count)?.assumingMemoryBound(to: UInt8.self) else {
            throw WebImageError(.encodeFailed, "out of memory for a \(pixels.width)x\(pixels.height) frame")
        }
        guard GifQuantizeBuffer(UInt32(pixels.width), UInt32(pixels.height), &colorCount, &red, &green, &blue, raster, &palette) == GIF_OK
        else {
            free(raster)
            throw WebImageError(.encodeFailed, "giflib could not quantise a frame")
        }
        var hasTransparency = false
        for pixel in 0..<count where straight[pixel * 4 + 3] < 128 {
            raster[pixel] = UInt8(transparentIndex)
            hasTransparency = true
        }
        guard let saved = GifMakeSavedImage(gif, nil), let colorMap = GifMakeMapObject(256, palette) else {
            free(raster)
            throw WebImageError(.encodeFailed, "giflib could not add a frame")
        }
        saved.pointee.ImageDesc = GifImageDesc(
            Left: 0, Top: 0, Width: Int32(pixels.width), Height: Int32(pixels.height),
            Interlace: false, ColorMap: colorMap)
        saved.pointee.RasterBits = raster
        guard isAnimated || hasTransparency else { return }
        let centiseconds = Int32(clamping: MonotonicClock.nanoseconds(frame.duration) / 10_000_000)
        var control = GraphicsControlBlock(
            DisposalMode: DISPOSE_BACKGROUND, UserInputFlag: false, DelayTime: centiseconds,
            TransparentColor: hasTransparency ? Int32(transparentIndex) : NO_TRANSPARENT_COLOR)
        guard EGifGCBToSavedExtension(&control, gif, Int32(index)) == GIF_OK else {
            throw WebImageError(.encodeFailed, "giflib could not add a frame's control block")
        }
    }

    private static func addLoopCount(_ loopCount: Int, to gif: UnsafeMutablePointer<GifFileType>) throws(WebImageError) {
        guard gif.pointee.ImageCount > 0 else { return }
        let first = gif.pointee.SavedImages
        var name = Array("NETSCAPE2.0".utf8)
        let count = min(max(0, loopCount), 0xFFFF)
        var data: [UInt8] = [1, UInt8(count & 0xFF), UInt8(count >> 8)]
        // The application block must come before the first frame's control block.
        var blocks: Int32 = 0
        var list: UnsafeMutablePointer<ExtensionBlock>?
        guard GifAddExtensionBlock(&blocks, &list, APPLICATION_EXT_FUNC_CODE, UInt32(name.count), &name) == GIF_OK,
            GifAddExtensionBlock(&blocks, &list, CONTINUE_EXT_FUNC_CODE, UInt32(data.count), &data) == GIF_OK
        else {
            throw WebImageError(.encodeFailed, "giflib could not add the loop count")
        }
        for index in 0..<Int(first!.pointee.ExtensionBlockCount) {
            let block = first!.pointee.ExtensionBlocks[index]
            guard GifAddExtensionBlock(&blocks, &list, block.Function, UInt32(block.ByteCount), block.Bytes) == GIF_OK else {
                throw WebImageError(.encodeFailed, "giflib could not add the loop count")
            }
        }
        GifFreeExtensions(&first!.pointee.ExtensionBlockCount, &first!.pointee.ExtensionBlocks)
        first!.pointee.ExtensionBlockCount = blocks
        first!.pointee.ExtensionBlocks = list
    }
}
