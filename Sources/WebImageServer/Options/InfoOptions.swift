import Foundation
import WebImage

/// What an `/info` URL asks for: imgproxy Pro's info options (its "Getting an image info" page),
/// with their names, short names and defaults, and two of this server's own (`frames`,
/// `color_profile`). Options that need the pixels (`average`, `dominant_colors`, `blurhash`, `crop`, `frames`,
/// `color_profile`) are off by default, as imgproxy's "slow" ones are.
package struct InfoOptions: Sendable, Equatable {
    /// `size`/`s`: the source's bytes. Default true.
    package var size = true
    /// `format`/`f`: the source's format. Default true.
    package var format = true
    /// `dimensions`/`d`: width and height as stored, and the EXIF orientation. Default true.
    package var dimensions = true
    /// `exif`: the EXIF tags, as exifread names them. Default true.
    package var exif = true
    /// `frames`/`fr` (this server's): the number of frames or pages. Default false.
    package var frames = false
    /// `color_profile`/`cp` (this server's): whether an ICC profile is embedded. Default false.
    package var colorProfile = false
    /// `color_description`/`cd` (this server's): the source's bit depth, primaries, transfer,
    /// matrix and gain map, and whether it is HDR (rendered to SDR when processed). Default false.
    package var colorDescription = false
    /// `average`/`avg:AVERAGE:IGNORE_TRANSPARENT`: the mean colour, fully transparent pixels left
    /// out unless the second argument is false. Default off.
    package var average = false
    package var averageIgnoresTransparent = true
    /// `dominant_colors`/`dc:DOMINANT_COLORS:BUILD_MISSED`: the six Palette swatches
    /// (`DominantColors`), those not found built from the others when asked. Default off.
    package var dominantColors = false
    /// `dominant_colors`' second argument: swatches not found are built from the others. Default false.
    package var buildsMissedColors = false
    /// `blurhash`/`bh:X:Y`: a BlurHash of X by Y components, 1...9 each; nil for none.
    package var blurHash: (x: Int, y: Int)?
    /// `thumbhash`/`th` (this server's): a ThumbHash of the image fitted in 100x100, in base64.
    /// Default false.
    package var thumbHash = false
    /// `crop`/`c:W:H:GRAVITY`: the crop's place as shares of the image; nil for none.
    package var crop: ProcessingOptions.Crop?
    /// `page`/`pg`: the frame or page the pixel options read, from 0. Default 0.
    package var page = 0
    /// `cachebuster`/`cb`, `expires`/`exp`, and the security options, as for processing.
    package var cacheBuster = ""
    package var expires: Int?
    package var security = ProcessingOptions.SecurityLimits()

    /// imgproxy's defaults.
    package init() {}

    package static func == (left: InfoOptions, right: InfoOptions) -> Bool { left.canonical == right.canonical }

    /// Whether the answer needs the pixels, not only the header and the bytes.
    var decodes: Bool {
        frames || colorProfile || colorDescription || average || dominantColors || thumbHash || blurHash != nil || crop != nil || page > 0
    }

    /// Every option that changes the answer, in one fixed order: the result cache's key.
    package var canonical: String {
        var parts = ["s:\(size ? 1 : 0)", "f:\(format ? 1 : 0)", "d:\(dimensions ? 1 : 0)", "exif:\(exif ? 1 : 0)"]
        if frames { parts.append("fr:1") }
        if colorProfile { parts.append("cp:1") }
        if colorDescription { parts.append("cd:1") }
        if average { parts.append("avg:1:\(averageIgnoresTransparent ? 1 : 0)") }
        if dominantColors { parts.append("dc:1:\(buildsMissedColors ? 1 : 0)") }
        if let blurHash { parts.append("bh:\(blurHash.x):\(blurHash.y)") }
        if thumbHash { parts.append("th:1") }
        if let crop {
            parts.append(
                "c:\(TransformSpec.format(crop.width)):\(TransformSpec.format(crop.height)):\(crop.gravity?.canonical ?? "ce")")
        }
        if page > 0 { parts.append("pg:\(page)") }
        if !cacheBuster.isEmpty { parts.append("cb:\(cacheBuster)") }
        if let security = security.canonical { parts.append(security) }
        return parts.joined(separator: "/")
    }
}

extension OptionsParser {
    /// The info options `segments` ask for (imgproxy's defaults first); a processing option's
    /// mistakes answer as they do for processing URLs: 400 with the option named, 403 for a
    /// security option the server does not allow, 404 for an expired URL.
    package func parseInfo(_ segments: [Substring]) throws(ProxyError) -> InfoOptions {
        var options = InfoOptions()
        for segment in segments {
            let parts = segment.components(separatedBy: argumentsSeparator).map { Substring($0) }
            let name = String(parts[0])
            let reader = ArgumentReader(option: name, arguments: Array(parts.dropFirst()))
            switch name {
            case "size", "s", "format", "f", "dimensions", "d", "exif", "frames", "fr", "color_profile", "cp", "color_description", "cd",
                "thumbhash", "th":
                try reader.expect(at: 1)
                let value = try reader.boolean(0) ?? true
                switch name {
                case "size", "s": options.size = value
                case "format", "f": options.format = value
                case "dimensions", "d": options.dimensions = value
                case "exif": options.exif = value
                case "frames", "fr": options.frames = value
                case "thumbhash", "th": options.thumbHash = value
                case "color_description", "cd": options.colorDescription = value
                default: options.colorProfile = value
                }
            case "average", "avg":
                try reader.expect(at: 2)
                options.average = try reader.boolean(0) ?? false
                options.averageIgnoresTransparent = try reader.boolean(1) ?? true
            case "dominant_colors", "dc":
                try reader.expect(at: 2)
                options.dominantColors = try reader.boolean(0) ?? false
                options.buildsMissedColors = try reader.boolean(1) ?? false
            case "blurhash", "bh":
                try reader.expect(at: 2)
                let x = try reader.integer(0, maximum: 9) ?? 0
                let y = try reader.integer(1, maximum: 9) ?? 0
                options.blurHash = x > 0 && y > 0 ? (x, y) : nil
            case "crop", "c":
                try reader.expect(at: 5)
                let width = try reader.number(0) ?? 0
                let height = try reader.number(1) ?? 0
                let gravity = try reader.gravity(from: 2)
                guard gravity?.kind != .smart else { throw reader.failure("a smart crop's place is not reported here") }
                options.crop = width > 0 && height > 0 ? ProcessingOptions.Crop(width: width, height: height, gravity: gravity) : nil
            case "page", "pg":
                try reader.expect(at: 1)
                options.page = try reader.integer(0, maximum: 100_000) ?? 0
            case "cachebuster", "cb", "expires", "exp", "max_src_resolution", "msr", "max_src_file_size", "msfs":
                // Read as processing URLs read them (an expired URL is a 404 there too).
                let parsed = try parse([segment])
                if ["cachebuster", "cb"].contains(name) { options.cacheBuster = parsed.cacheBuster }
                options.expires = parsed.expires ?? options.expires
                options.security.sourcePixels = parsed.security.sourcePixels ?? options.security.sourcePixels
                options.security.sourceBytes = parsed.security.sourceBytes ?? options.security.sourceBytes
            default:
                throw .badRequest("unknown info option \"\(name)\"")
            }
        }
        return options
    }
}
