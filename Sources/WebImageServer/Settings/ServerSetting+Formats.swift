import Foundation
import WebImage

/// Which format a result is written in, and the encoders' settings.
extension ServerSetting {
    static let formats: [ServerSetting] = [
        .flag(
            "AUTO_WEBP", \.autoWebP, imgproxy: .init("AUTO_WEBP", .boolean),
            help: "WebP for clients that accept it, when the URL names no format (with `Vary: Accept`)"),
        .flag("AUTO_AVIF", \.autoAVIF, imgproxy: .init("AUTO_AVIF", .boolean), help: "AVIF likewise (before WebP)"),
        .flag("AUTO_JXL", \.autoJXL, imgproxy: .init("AUTO_JXL", .boolean), help: "JPEG XL likewise (before AVIF and WebP, as imgproxy)"),
        .flag(
            "ENFORCE_WEBP", \.enforceWebP, imgproxy: .init("ENFORCE_WEBP", .boolean),
            help: "WebP for clients that accept it even when the URL names another format"),
        .flag("ENFORCE_AVIF", \.enforceAVIF, imgproxy: .init("ENFORCE_AVIF", .boolean), help: "AVIF likewise, for still sources"),
        .flag("ENFORCE_JXL", \.enforceJXL, imgproxy: .init("ENFORCE_JXL", .boolean), help: "JPEG XL likewise, for still sources"),
        ServerSetting(
            "PREFERRED_FORMATS", form: .value("FORMAT,..."), imgproxy: .init("PREFERRED_FORMATS", .list), default: "jpeg,png,gif",
            help:
                "a URL without a format keeps the source's format when listed, else gets the first listed that fits (an animation needs GIF or WebP, transparency not JPEG), as imgproxy",
            read: { (values, settings) throws(WebImageError) in
                settings.configuration.preferredFormats = try SettingText.formats(values.last)
            },
            rule: { $0.preferredFormats.isEmpty ? "names at least one format" : nil }),
        ServerSetting(
            "SKIP_PROCESSING_FORMATS", form: .value("FORMAT,..."), imgproxy: .init("SKIP_PROCESSING_FORMATS", .list), default: "none",
            help:
                "sources in these formats are answered as they are unless the URL names another format (URLs add to it with `skp`); an SVG answered as SVG, this way or by `raw`, is always an attachment, under the `Content-Security-Policy` every answer has (`default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox`, imgproxy's: its scripts and references neither run nor load)"
        ) { (values, settings) throws(WebImageError) in
            settings.configuration.skipProcessingFormats = Set(try SettingText.formats(values.last))
        },
        .integer(
            "QUALITY", \.defaultQuality, "Q", rule: .within(1...100), imgproxy: .init("QUALITY", .integer), default: "80",
            help: "lossy quality when the URL gives none"),
        ServerSetting(
            "FORMAT_QUALITY", form: .value("FORMAT=Q,..."), imgproxy: .init("FORMAT_QUALITY", .list), default: "webp=79,avif=63,jxl=77",
            help: "quality by format when the URL gives none, over imgproxy's defaults; the URL's `q`, then its `fq`, win",
            read: { (values, settings) throws(WebImageError) in
                for pair in SettingText.list(values.last) {
                    let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                    guard parts.count == 2, let format = ImageFormat(rawValue: parts[0] == "jpg" ? "jpeg" : parts[0]),
                        let quality = Int(parts[1])
                    else {
                        throw WebImageError(.invalidArgument, "is FORMAT=QUALITY pairs, not \"\(pair)\"")
                    }
                    settings.configuration.formatQuality[format] = quality
                }
            },
            rule: { $0.formatQuality.values.allSatisfy { (1...100).contains($0) } ? nil : "has qualities 1-100" }),
    ]

    /// Encoder settings for every result, each within imgproxy's range (`vips/config.go`).
    static let encoding: [ServerSetting] = [
        .flag(
            "JPEG_PROGRESSIVE", \.encoding.jpegProgressive, imgproxy: .init("JPEG_PROGRESSIVE", .boolean),
            help: "JPEG results are progressive"),
        ServerSetting(
            "WEBP_PRESET", form: .value("NAME"), imgproxy: .init("WEBP_PRESET", .text), default: "default",
            help: "libwebp's preset for WebP results: default, photo, picture, drawing, icon or text"
        ) { (values, settings) throws(WebImageError) in
            guard let preset = values.last.flatMap({ WebPEncodingPreset(rawValue: $0.lowercased()) }) else {
                let names = WebPEncodingPreset.allCases.map(\.rawValue).joined(separator: ", ")
                throw WebImageError(.invalidArgument, "is one of \(names), not \"\(values.last ?? "")\"")
            }
            settings.configuration.encoding.webPPreset = preset
        },
        .integer(
            "WEBP_EFFORT", \.encoding.webPEffort, "N", rule: .within(1...6), imgproxy: .init("WEBP_EFFORT", .integer), default: "4",
            help: "WebP's effort"),
        .integer(
            "AVIF_SPEED", \.encoding.avifSpeed, "N", rule: .within(0...9), imgproxy: .init("AVIF_SPEED", .integer), default: "6",
            help: "AVIF's speed, 0 the slowest and smallest"),
        .integer(
            "JXL_EFFORT", \.encoding.jxlEffort, "N", rule: .within(1...9), imgproxy: .init("JXL_EFFORT", .integer), default: "7",
            help: "JPEG XL's effort (lowered for results too large for its memory budget)"),
        .integer(
            "PNG_COMPRESSION", \.encoding.pngCompressionLevel, "N", rule: .within(0...9),
            default: String(EncodeOptions().pngCompressionLevel),
            help:
                "PNG's deflate level (libdeflate's), 0 the fastest; at 4 about the size of libvips' level 6, in half the time (rows filtered adaptively as imgproxy asks libvips to)"
        ),
        .flag(
            "PNG_INTERLACED", \.encoding.pngInterlaced, imgproxy: .init("PNG_INTERLACED", .boolean),
            help: "PNG results are Adam7 interlaced"),
        .flag(
            "PNG_QUANTIZE", \.encoding.pngQuantize, imgproxy: .init("PNG_QUANTIZE", .boolean),
            help:
                "PNG results are reduced to a palette of at most `--png-quantization-colors` (indexes of 8 bits above 16 colours, 4 above 4, 2 above 2, else 1, as imgproxy). The quantiser is this project's own (median cut with Floyd-Steinberg dithering; an image with no more colours than that keeps them exactly), not libimagequant, which is GPL-3.0"
        ),
        .integer(
            "PNG_QUANTIZATION_COLORS", \.encoding.pngQuantizationColors, "N", rule: .within(2...256),
            imgproxy: .init("PNG_QUANTIZATION_COLORS", .integer), default: "256", help: "the most colours of a quantised PNG"),
    ]
}
