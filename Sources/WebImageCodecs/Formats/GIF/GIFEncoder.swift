import CGIF
import Foundation

/// Writes GIFs with giflib: each frame quantised to a local palette of at most 255 colours by
/// giflib's median-cut quantiser, pixels under half opacity mapped to a transparent index 255,
/// each frame a full canvas cleared before the next (disposal "background"), delays in
/// centiseconds, and a NETSCAPE2.0 loop count for animations.
///
/// Frames are written one at a time with giflib's sequential calls (`EGifPutImageDesc`,
/// `EGifPutLine`), not collected as "saved images" for `EGifSpew`: giflib's encoder never frees
/// its saved-image list (`EGifCloseFile`, which `EGifSpew` ends with, frees only the screen, the
/// current colour map and its own state), so every encode through `EGifSpew` leaked each frame's
/// raster, colour map and extensions (LeakSanitizer, issue 23). Here every buffer is Swift's or is
/// freed by the call that made it, and at most one frame's raster is alive at a time.
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
        // EGifCloseFile writes the trailer and frees the file's state on every path.
        let written = withExtendedLifetime(sink) { () -> Result<Void, WebImageError> in
            do throws(WebImageError) {
                try writeScreen(of: image, to: gif)
                if image.isAnimated { try writeLoopCount(image.loopCount, to: gif) }
                for frame in image.frames {
                    try writeFrame(frame, isAnimated: image.isAnimated, to: gif)
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        let closed = withExtendedLifetime(sink) { EGifCloseFile(gif, &status) }
        try written.get()
        guard closed == GIF_OK else { throw WebImageError(.encodeFailed, "giflib could not finish the GIF: error \(status)") }
        return sink.bytes
    }

    private static func writeScreen(of image: Image, to gif: UnsafeMutablePointer<GifFileType>) throws(WebImageError) {
        EGifSetGifVersion(gif, true)
        guard EGifPutScreenDesc(gif, Int32(image.pixelWidth), Int32(image.pixelHeight), 8, 0, nil) == GIF_OK else {
            throw failure("the screen descriptor", gif)
        }
    }

    /// The NETSCAPE2.0 application block, written before the first frame as players expect.
    private static func writeLoopCount(_ loopCount: Int, to gif: UnsafeMutablePointer<GifFileType>) throws(WebImageError) {
        let name = Array("NETSCAPE2.0".utf8)
        let count = min(max(0, loopCount), 0xFFFF)
        let data: [UInt8] = [1, UInt8(count & 0xFF), UInt8(count >> 8)]
        guard EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK,
            EGifPutExtensionBlock(gif, Int32(name.count), name) == GIF_OK,
            EGifPutExtensionBlock(gif, Int32(data.count), data) == GIF_OK,
            EGifPutExtensionTrailer(gif) == GIF_OK
        else {
            throw failure("the loop count", gif)
        }
    }

    private static func writeFrame(_ frame: ImageFrame, isAnimated: Bool, to gif: UnsafeMutablePointer<GifFileType>)
        throws(WebImageError)
    {
        var quantised = try quantise(frame.pixels)
        if isAnimated || quantised.hasTransparency {
            try writeControlBlock(delay: frame.duration, transparent: quantised.hasTransparency, to: gif)
        }
        guard let colorMap = GifMakeMapObject(256, quantised.palette) else {
            throw WebImageError(.encodeFailed, "out of memory for a GIF colour map")
        }
        defer { GifFreeMapObject(colorMap) }
        let width = Int32(frame.pixels.width)
        let height = Int32(frame.pixels.height)
        guard EGifPutImageDesc(gif, 0, 0, width, height, false, colorMap) == GIF_OK else {
            throw failure("a frame's descriptor", gif)
        }
        let wrote = quantised.raster.withUnsafeMutableBufferPointer { raster in
            EGifPutLine(gif, raster.baseAddress, Int32(raster.count))
        }
        guard wrote == GIF_OK else { throw failure("a frame's pixels", gif) }
    }

    private static func writeControlBlock(delay: Duration, transparent: Bool, to gif: UnsafeMutablePointer<GifFileType>)
        throws(WebImageError)
    {
        var control = GraphicsControlBlock(
            DisposalMode: DISPOSE_BACKGROUND, UserInputFlag: false,
            DelayTime: Int32(clamping: MonotonicClock.nanoseconds(delay) / 10_000_000),
            TransparentColor: transparent ? Int32(transparentIndex) : NO_TRANSPARENT_COLOR)
        var bytes = [UInt8](repeating: 0, count: 4)
        let length = EGifGCBToExtension(&control, &bytes)
        guard EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, Int32(length), bytes) == GIF_OK else {
            throw failure("a frame's control block", gif)
        }
    }

    /// A frame as palette indices: giflib's median-cut palette, transparent pixels at index 255.
    private struct QuantisedFrame {
        var raster: [UInt8]
        var palette: [GifColorType]
        var hasTransparency: Bool
    }

    private static func quantise(_ pixels: PixelBuffer) throws(WebImageError) -> QuantisedFrame {
        let count = pixels.width * pixels.height
        let straight = pixels.bytes
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
        var raster = [UInt8](repeating: 0, count: count)
        let quantised = raster.withUnsafeMutableBufferPointer { raster in
            GifQuantizeBuffer(UInt32(pixels.width), UInt32(pixels.height), &colorCount, &red, &green, &blue, raster.baseAddress, &palette)
        }
        guard quantised == GIF_OK else { throw WebImageError(.encodeFailed, "giflib could not quantise a frame") }
        var hasTransparency = false
        for pixel in 0..<count where straight[pixel * 4 + 3] < 128 {
            raster[pixel] = UInt8(transparentIndex)
            hasTransparency = true
        }
        return QuantisedFrame(raster: raster, palette: palette, hasTransparency: hasTransparency)
    }

    private static func failure(_ part: String, _ gif: UnsafeMutablePointer<GifFileType>) -> WebImageError {
        let reason = GifErrorString(gif.pointee.Error).map { String(cString: $0) } ?? "error \(gif.pointee.Error)"
        return WebImageError(.encodeFailed, "giflib could not write \(part): \(reason)")
    }
}
