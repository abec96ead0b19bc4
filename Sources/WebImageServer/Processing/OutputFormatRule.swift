import WebImage

/// How a result's format is chosen, as imgproxy's `determineOutputFormat` chooses it
/// (`processing/processing.go`; the client's part in `clientfeatures/detector.go`):
///
/// - a URL without a format gets the best format the client accepts among those the server may
///   choose on its own (JPEG XL, then AVIF, then WebP: `IMGPROXY_AUTO_*`), JPEG XL and AVIF
///   only for a still source; else the source's own format when it is one of
///   ``sourceFormats`` (`IMGPROXY_PREFERRED_FORMATS`, JPEG, PNG and GIF by default); else the
///   first of those that can hold the result (an animation needs GIF or WebP, transparency
///   anything but JPEG); else the first of them;
/// - a URL with a format gets it, unless the client accepts a format the server enforces
///   (`IMGPROXY_ENFORCE_*`, same order and the same rule for animations).
///
/// The result is animated only in GIF and WebP, as in imgproxy: an animation made into another
/// format keeps its first frame.
struct OutputFormatRule: Sendable, Equatable {
    /// The URL's format (`format`, `ext`, the path's extension); nil to choose.
    var requested: ImageFormat?
    /// Formats the client accepts that the server may choose for a URL without a format, best first.
    var preferred: [ImageFormat] = []
    /// Formats the client accepts that replace even a requested one, best first.
    var enforced: [ImageFormat] = []
    /// The formats a source's own is kept in, and the fallbacks in order (imgproxy's default).
    var sourceFormats: [ImageFormat] = [.jpeg, .png, .gif]

    /// `format:best` (imgproxy Pro's): every format the rule could choose for this source is
    /// tried and the smallest result kept. Default false.
    var best = false

    /// Always `format`, whatever the source and the client.
    static func fixed(_ format: ImageFormat) -> OutputFormatRule {
        OutputFormatRule(requested: format, sourceFormats: [format])
    }

    /// The formats that keep an animation.
    static func animates(_ format: ImageFormat) -> Bool { format == .gif || format == .webP }

    /// The format for a source in `source` (nil when it could not be told), animated or not,
    /// whose result has transparent pixels or not.
    func resolve(source: ImageFormat?, animated: Bool, transparent: Bool) -> ImageFormat {
        let negotiable = requested == nil ? preferred : enforced
        if let chosen = negotiable.first(where: { $0 == .webP || !animated }) { return chosen }
        if let requested { return requested }
        if let source, sourceFormats.contains(source) { return source }
        return sourceFormats.first { format in
            (!animated || Self.animates(format)) && (!transparent || format != .jpeg)
        } ?? sourceFormats.first ?? .png
    }

    /// The formats to encode a result in, the one ``resolve(source:animated:transparent:)``
    /// chooses first. With ``best``: also every other one the client accepts and the server may
    /// choose (``preferred``) and every one of ``sourceFormats`` that holds the result (an
    /// animation only in a format that animates, transparency in anything but JPEG), as imgproxy
    /// Pro's best format takes its preferred formats and the detected modern ones.
    func candidates(source: ImageFormat?, animated: Bool, transparent: Bool) -> [ImageFormat] {
        let chosen = resolve(source: source, animated: animated, transparent: transparent)
        guard best else { return [chosen] }
        var formats = [chosen]
        for format in preferred + sourceFormats where !formats.contains(format) {
            if animated, Self.animates(chosen), !Self.animates(format) { continue }
            if transparent, format == .jpeg { continue }
            formats.append(format)
        }
        return formats
    }

    /// Whether the result may be animated, before the source is decoded: whether every frame
    /// must be decoded.
    var mayAnimate: Bool {
        if enforced.contains(.webP) || (requested == nil && preferred.contains(.webP)) { return true }
        if let requested { return Self.animates(requested) }
        return sourceFormats.contains(where: Self.animates)
    }

    /// What of the rule changes a result, for its cache key and ETag.
    var key: String {
        func names(_ formats: [ImageFormat]) -> String { formats.map(\.rawValue).joined(separator: ",") }
        let chosen = best ? "best" : requested?.rawValue ?? "auto"
        return "\(chosen);p=\(names(preferred));e=\(names(enforced));s=\(names(sourceFormats))"
    }
}
