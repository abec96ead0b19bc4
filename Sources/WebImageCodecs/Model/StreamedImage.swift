import CWebImageCodecs

/// What a codec stream in the C shim has decoded so far, made into an ``Image``.
struct StreamedImage {
    let pixels: cwi_stream_image

    /// Rows that hold decoded pixels: all of them once a scan or an Adam7 pass is drawn (the
    /// missing pixels of an early pass stay transparent), else those complete top down.
    var visibleRows: Int { pixels.passes > 0 ? Int(pixels.height) : Int(pixels.rows) }

    /// The image, rows not yet decoded transparent. `opaque` is true for sources without alpha
    /// (JPEG), so only missing rows make the image translucent; CMYK is converted first.
    func image(
        format: ImageFormat, opaque: Bool, inverted: Bool = false, orientation: ExifOrientation = .up,
        options: DecodeOptions
    ) -> Image {
        let width = Int(pixels.width)
        let height = Int(pixels.height)
        let decoded = visibleRows * width * 4
        var bytes = Array(UnsafeBufferPointer(start: pixels.pixels, count: width * height * 4))
        if pixels.is_cmyk != 0 {
            var ink = Array(bytes[..<decoded])
            JPEGCoder.convertCMYKToRGBA(&ink, inverted: inverted)
            bytes.replaceSubrange(..<decoded, with: ink)
        }
        let image = Image(
            pixels: PixelBuffer(width: width, height: height, straightRGBA: bytes), scale: options.scale, orientation: orientation,
            sourceFormat: format, hasAlpha: !opaque || visibleRows < height)
        return CodersManager.fitted(image, into: options.thumbnail)
    }
}
