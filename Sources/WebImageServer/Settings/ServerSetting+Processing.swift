import Foundation
import WebImage

/// The defaults of the options a URL does not set, and the watermark.
extension ServerSetting {
    static let processingDefaults: [ServerSetting] =
        [
            .toggle(
                "STRIP_METADATA", \.stripMetadata, imgproxy: .init("STRIP_METADATA", .boolean), help: "the default of `sm`: strip metadata"),
            .toggle(
                "STRIP_COLOR_PROFILE", \.stripColorProfile, imgproxy: .init("STRIP_COLOR_PROFILE", .boolean),
                help: "the default of `scp`: convert to sRGB and drop the profile"),
            .flag(
                "PRESERVE_HDR", \.preserveHDR, imgproxy: .init("PRESERVE_HDR", .boolean),
                help: "the default of `ph`: keep high bit depths in results whose format holds them (PNG, AVIF, JPEG XL, TIFF)"),
            .toggle(
                "AUTO_ROTATE", \.autoRotate, imgproxy: .init("AUTO_ROTATE", .boolean),
                help: "the default of `ar`: apply the EXIF orientation"),
            .toggle(
                "KEEP_COPYRIGHT", \.keepCopyright, imgproxy: .init("KEEP_COPYRIGHT", .boolean),
                help: "the default of `kcr`: keep the EXIF Copyright and Artist when stripping metadata"),
            .flag(
                "ENFORCE_THUMBNAIL", \.enforceThumbnail, imgproxy: .init("ENFORCE_THUMBNAIL", .boolean),
                help: "the default of `eth`: a HEIF source's embedded thumbnail in place of its image"),
            ServerSetting(
                "UNSHARP_MASKING_MODE", form: .value("MODE"), imgproxy: .init("UNSHARP_MASKING_MODE", .text), default: "none",
                help: "the default of `ush` (imgproxy Pro's): none, auto (every downscaled result without `sh`) or always"
            ) { (values, settings) throws(WebImageError) in
                guard let mode = values.last.flatMap(UnsharpMasking.Mode.init(rawValue:)) else {
                    throw WebImageError(.invalidArgument, "is none, auto or always, not \"\(values.last ?? "")\"")
                }
                settings.parts.unsharpMasking.mode = mode
            },
            ServerSetting(
                "UNSHARP_MASKING_WEIGHT", form: .value("NUMBER"), imgproxy: .init("UNSHARP_MASKING_WEIGHT", .decimal), default: "1",
                help: "unsharp masking's weight",
                read: { (values, settings) throws(WebImageError) in
                    settings.parts.unsharpMasking.weight = try SettingText.number(values.last)
                },
                rule: { ($0.unsharpMasking?.weight ?? 1) > 0 ? nil : "is above 0" }),
            ServerSetting(
                "UNSHARP_MASKING_DIVIDER", form: .value("NUMBER"), imgproxy: .init("UNSHARP_MASKING_DIVIDER", .decimal), default: "24",
                help: "unsharp masking's divider",
                read: { (values, settings) throws(WebImageError) in
                    settings.parts.unsharpMasking.divider = try SettingText.number(values.last)
                },
                rule: { ($0.unsharpMasking?.divider ?? 1) > 0 ? nil : "is above 0" }),
            ServerSetting(
                "AUTOQUALITY_METHOD", form: .value("METHOD"), imgproxy: .init("AUTOQUALITY_METHOD", .text), default: "none",
                help:
                    "`size`: every lossy result at the highest quality in MIN...MAX that fits the target's bytes; the default of a URL's `aq`",
                read: { (values, settings) throws(WebImageError) in
                    switch values.last {
                    case "none": settings.configuration.autoqualityByDefault = false
                    case "size": settings.configuration.autoqualityByDefault = true
                    case let other:
                        throw WebImageError(
                            .invalidArgument, "is none or size (dssim and ml are not supported here), not \"\(other ?? "")\"")
                    }
                },
                rule: { $0.autoqualityByDefault && $0.autoqualityDefaults.target <= 0 ? "size needs --autoquality-target above 0" : nil }),
            .integer(
                "AUTOQUALITY_TARGET", \.autoqualityDefaults.target, "BYTES", rule: .nonNegative,
                imgproxy: .init("AUTOQUALITY_TARGET", .integer),
                default: "-", help: "autoquality's target size in bytes"),
            .integer(
                "AUTOQUALITY_MIN", \.autoqualityDefaults.minimum, "Q", rule: .within(1...100), imgproxy: .init("AUTOQUALITY_MIN", .integer),
                default: "70", help: "autoquality's lowest quality"),
            ServerSetting(
                "AUTOQUALITY_MAX", form: .value("Q"), imgproxy: .init("AUTOQUALITY_MAX", .integer), default: "80",
                help: "autoquality's highest quality, at least the lowest",
                read: { (values, settings) throws(WebImageError) in
                    settings.configuration.autoqualityDefaults.maximum = try SettingText.integer(values.last)
                },
                rule: { configuration in
                    let defaults = configuration.autoqualityDefaults
                    return (defaults.minimum...100).contains(defaults.maximum) ? nil : "is at least --autoquality-min and at most 100"
                }),
        ] + watermark

    /// The image `wm` lays over results.
    static let watermark: [ServerSetting] = [
        ServerSetting(
            "WATERMARK_PATH", form: .value("FILE"), imgproxy: .init("WATERMARK_PATH", .text), default: "none",
            help: "the image `wm` lays over results (without one `wm` changes nothing, as in imgproxy)",
            read: reading(\.parts.watermark.path)
        ),
        ServerSetting(
            "WATERMARK_URL", form: .value("URL"), imgproxy: .init("WATERMARK_URL", .text), default: "none",
            help: "the watermark's URL, fetched like a source",
            read: reading(\.parts.watermark.url)
        ),
        ServerSetting(
            "WATERMARK_DATA", form: .value("BASE64"), imgproxy: .init("WATERMARK_DATA", .text), default: "none",
            help: "the watermark in base64 (before the path and the URL, imgproxy's order)",
            read: reading(\.parts.watermark.data)
        ),
        ServerSetting(
            "WATERMARK_OPACITY", form: .value("OPACITY"), imgproxy: .init("WATERMARK_OPACITY", .decimal), default: "1",
            help: "multiplies every URL's `wm` opacity",
            read: { (values, settings) throws(WebImageError) in settings.parts.watermarkOpacity = try SettingText.number(values.last) },
            rule: { (0...1).contains($0.watermark?.opacity ?? 1) ? nil : "is between 0 and 1" }),
    ]
}
