import WebImage

/// The colour options of imgproxy's paid edition, in the order its docs list them: `adjust`
/// (brightness added to each channel, contrast scaling each channel around mid-grey 128,
/// saturation scaling each channel's distance from the pixel's luma, Rec. 601), then
/// `monochrome` (the luma tinting the colour, mixed in by the intensity), `duotone` (the luma
/// choosing between the dark and the light colour, mixed in by the intensity) and `colorize` (a
/// colour laid over at an opacity, the image's alpha kept or made opaque where it is laid). imgproxy
/// Pro's source is not public: these are the effects its documentation describes, on straight
/// 8-bit sRGB.
struct ColorFilterTransformer: ImageTransformer {
    var options: ProcessingOptions.ColorFilters

    var transformerKey: String { "colorFilters" }

    func transform(_ image: Image, forKey key: String) -> Image? {
        // Works on 8-bit pixels: a 16-bit image is reduced first.
        let image = image.reducedToEightBits()
        var result = image
        result.frames = image.frames.map { ImageFrame(pixels: filtered($0.pixels), duration: $0.duration) }
        if let colorize = options.colorize, !colorize.keepsAlpha, colorize.opacity > 0 {
            result.hasAlpha = result.frames.contains { !$0.pixels.isOpaque }
        }
        return result
    }

    private func filtered(_ pixels: PixelBuffer) -> PixelBuffer {
        var bytes = pixels.bytes
        for offset in stride(from: 0, to: bytes.count, by: 4) {
            var rgb = (Double(bytes[offset]), Double(bytes[offset + 1]), Double(bytes[offset + 2]))
            var alpha = Double(bytes[offset + 3])
            rgb = adjusted(rgb)
            if let monochrome = options.monochrome, monochrome.intensity > 0 {
                let level = Self.luma(rgb) / 255
                let tint = (
                    Double(monochrome.color.red) * level, Double(monochrome.color.green) * level, Double(monochrome.color.blue) * level
                )
                rgb = Self.mix(rgb, tint, monochrome.intensity)
            }
            if let duotone = options.duotone, duotone.intensity > 0 {
                let level = Self.luma(rgb) / 255
                let tone = Self.mix(Self.components(duotone.dark), Self.components(duotone.light), level)
                rgb = Self.mix(rgb, tone, duotone.intensity)
            }
            if let colorize = options.colorize, colorize.opacity > 0 {
                rgb = Self.mix(rgb, Self.components(colorize.color), colorize.opacity)
                if !colorize.keepsAlpha { alpha = alpha + (255 - alpha) * colorize.opacity }
            }
            bytes[offset] = Self.byte(rgb.0)
            bytes[offset + 1] = Self.byte(rgb.1)
            bytes[offset + 2] = Self.byte(rgb.2)
            bytes[offset + 3] = Self.byte(alpha)
        }
        return PixelBuffer(width: pixels.width, height: pixels.height, straightRGBA: bytes)
    }

    private func adjusted(_ rgb: (Double, Double, Double)) -> (Double, Double, Double) {
        let brightness = Double(options.brightness)
        var (r, g, b) = (rgb.0 + brightness, rgb.1 + brightness, rgb.2 + brightness)
        if options.contrast != 1 {
            (r, g, b) = ((r - 128) * options.contrast + 128, (g - 128) * options.contrast + 128, (b - 128) * options.contrast + 128)
        }
        if options.saturation != 1 {
            let level = Self.luma((r, g, b))
            (r, g, b) = (
                level + (r - level) * options.saturation, level + (g - level) * options.saturation, level + (b - level) * options.saturation
            )
        }
        return (r, g, b)
    }

    static func luma(_ rgb: (Double, Double, Double)) -> Double { 0.299 * rgb.0 + 0.587 * rgb.1 + 0.114 * rgb.2 }

    static func mix(_ a: (Double, Double, Double), _ b: (Double, Double, Double), _ t: Double) -> (Double, Double, Double) {
        (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t, a.2 + (b.2 - a.2) * t)
    }

    static func components(_ color: RGBAColor) -> (Double, Double, Double) { (Double(color.red), Double(color.green), Double(color.blue)) }

    static func byte(_ value: Double) -> UInt8 { UInt8(min(255, max(0, value.rounded()))) }
}
