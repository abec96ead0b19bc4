import Foundation
import WebImage

extension ProcessingOption {
    /// Colour, blur, sharpening and the background: what is done to the pixels.
    static let effects: [ProcessingOption] = [
        ProcessingOption(["background", "bg"], arguments: 3) { (_, reader, options) throws(ProxyError) in
            options.background = try reader.color()
        },
        ProcessingOption(["blur", "bl"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.blur = try reader.number(0, maximum: TransformSpec.maximumBlurRadius) ?? 0
        },
        ProcessingOption(["sharpen", "sh"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.sharpen = try reader.number(0, maximum: TransformSpec.maximumBlurRadius) ?? 0
        },
        ProcessingOption(["pixelate", "pix"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.pixelate = try reader.integer(0) ?? 0
        },
        ProcessingOption(["adjust", "a"], arguments: 3) { (_, reader, options) throws(ProxyError) in
            options.colorFilters.brightness = try reader.brightness(0) ?? options.colorFilters.brightness
            options.colorFilters.contrast = try reader.number(1, maximum: 100) ?? options.colorFilters.contrast
            options.colorFilters.saturation = try reader.number(2, maximum: 100) ?? options.colorFilters.saturation
        },
        ProcessingOption(["brightness", "br"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.colorFilters.brightness = try reader.brightness(0) ?? 0
        },
        ProcessingOption(["contrast", "co"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.colorFilters.contrast = try reader.number(0, maximum: 100) ?? 1
        },
        ProcessingOption(["saturation", "sa"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.colorFilters.saturation = try reader.number(0, maximum: 100) ?? 1
        },
        ProcessingOption(["monochrome", "mc"], arguments: 2) { (_, reader, options) throws(ProxyError) in
            let intensity = try reader.number(0, maximum: 1) ?? 0
            let color = try reader.hexColor(at: 1) ?? RGBAColor(hex: "b3b3b3")!
            options.colorFilters.monochrome = (intensity, color)
        },
        ProcessingOption(["duotone", "dt"], arguments: 3) { (_, reader, options) throws(ProxyError) in
            let intensity = try reader.number(0, maximum: 1) ?? 0
            let dark = try reader.hexColor(at: 1) ?? .black
            let light = try reader.hexColor(at: 2) ?? .white
            options.colorFilters.duotone = (intensity, dark, light)
        },
        ProcessingOption(["colorize", "col"], arguments: 3) { (_, reader, options) throws(ProxyError) in
            let opacity = try reader.number(0, maximum: 1) ?? 0
            let color = try reader.hexColor(at: 1) ?? .black
            options.colorFilters.colorize = (opacity, color, try reader.boolean(2) ?? false)
        },
        ProcessingOption(["background_alpha", "bga"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.backgroundAlpha = try reader.number(0, maximum: 1) ?? 1
        },
        ProcessingOption(["unsharp_masking", "ush"], arguments: 3) { (parser, reader, options) throws(ProxyError) in
            var masking = options.unsharpMasking ?? parser.baseOptions.unsharpMasking ?? UnsharpMasking(mode: .auto)
            masking.mode = try reader.unsharpMode(0) ?? masking.mode
            masking.weight = try reader.positive(1) ?? masking.weight
            masking.divider = try reader.positive(2) ?? masking.divider
            options.unsharpMasking = masking
        },
    ]
}
