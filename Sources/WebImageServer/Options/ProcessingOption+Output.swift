import Foundation
import WebImage

extension ProcessingOption {
    /// The result's format and quality, metadata, caching and what is answered; the security limits.
    static let output: [ProcessingOption] = [
        ProcessingOption(["quality", "q"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.quality = try reader.integer(0, maximum: 100) ?? 0
        },
        ProcessingOption(["format_quality", "fq"]) { (parser, reader, options) throws(ProxyError) in
            guard reader.arguments.count.isMultiple(of: 2) else { throw reader.failure("takes pairs of format and quality") }
            for index in stride(from: 0, to: reader.arguments.count, by: 2) {
                let format = try parser.format(String(reader.arguments[index]), option: reader.option)
                options.formatQuality[format] = try reader.integer(index + 1, maximum: 100) ?? 0
            }
        },
        ProcessingOption(["max_bytes", "mb"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.maxBytes = try reader.integer(0) ?? 0
        },
        ProcessingOption(["format", "f", "ext"], arguments: 1) { (parser, reader, options) throws(ProxyError) in
            options.format = nil
            options.bestFormat = false
            if let text = reader.text(0) { try parser.setFormat(String(text), option: reader.option, in: &options) }
        },
        ProcessingOption(["strip_metadata", "sm"], arguments: 1) { (parser, reader, options) throws(ProxyError) in
            options.stripMetadata = try reader.boolean(0) ?? parser.baseOptions.stripMetadata
        },
        ProcessingOption(["strip_color_profile", "scp"], arguments: 1) { (parser, reader, options) throws(ProxyError) in
            options.stripColorProfile = try reader.boolean(0) ?? parser.baseOptions.stripColorProfile
        },
        ProcessingOption(["cachebuster", "cb"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.cacheBuster = String(reader.arguments.first ?? "")
        },
        ProcessingOption(["expires", "exp"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            // Unix time up to the end of year 9999: every timestamp a client can mean. 0 or less
            // is no expiry (imgproxy's applyExpiresOption checks only a time above 0).
            options.expires = try reader.unixTime(0)
        },
        ProcessingOption(["filename", "fn"], arguments: 2) { (_, reader, options) throws(ProxyError) in
            options.filename = try reader.filename()
        },
        ProcessingOption(["return_attachment", "att"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.returnAttachment = try reader.boolean(0) ?? options.returnAttachment
        },
        ProcessingOption(["skip_processing", "skp"]) { (_, reader, options) throws(ProxyError) in
            for text in reader.arguments {
                let name = text.lowercased()
                guard let format = ImageFormat(rawValue: name == "jpg" ? "jpeg" : name) else {
                    throw reader.failure("unknown format \"\(text)\"")
                }
                options.skipProcessing.insert(format)
            }
        },
        ProcessingOption(["raw"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.raw = try reader.boolean(0) ?? options.raw
        },
        ProcessingOption(["hashsum", "hs"], arguments: 2) { (_, reader, options) throws(ProxyError) in
            let type = reader.text(0).map(String.init) ?? "none"
            guard type != "none" else {
                options.hashsum = nil
                return
            }
            guard let kind = ProcessingOptions.Hashsum.Kind(rawValue: type) else {
                throw reader.failure("unknown hashsum type \"\(type)\" (none, md5, sha1, sha256, sha512)")
            }
            guard let digest = reader.text(1)?.lowercased(), digest.allSatisfy(\.isHexDigit) else {
                throw reader.failure("the hashsum is not hex")
            }
            options.hashsum = ProcessingOptions.Hashsum(kind: kind, digest: digest)
        },
        ProcessingOption(["page", "pg"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.page = try reader.integer(0, maximum: 100_000) ?? 0
        },
        ProcessingOption(["pages", "pgs"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.pages = max(1, try reader.integer(0, maximum: 1000) ?? 1)
        },
        ProcessingOption(["autoquality", "aq"], arguments: 5) { (parser, reader, options) throws(ProxyError) in
            options.autoquality = try reader.autoquality(defaults: options.autoquality ?? parser.autoqualityDefaults)
        },
        ProcessingOption(["keep_copyright", "kcr"], arguments: 1) { (parser, reader, options) throws(ProxyError) in
            options.keepCopyright = try reader.boolean(0) ?? parser.baseOptions.keepCopyright
        },
        ProcessingOption(["enforce_thumbnail", "eth"], arguments: 1) { (parser, reader, options) throws(ProxyError) in
            options.enforceThumbnail = try reader.boolean(0) ?? parser.baseOptions.enforceThumbnail
        },
        ProcessingOption(["video_thumbnail_second", "vts"], arguments: 1) { (parser, reader, options) throws(ProxyError) in
            options.videoThumbnailSecond = try reader.number(0) ?? parser.baseOptions.videoThumbnailSecond
        },
        ProcessingOption(["video_thumbnail_keyframes", "vtk"], arguments: 1) { (parser, reader, options) throws(ProxyError) in
            options.videoThumbnailKeyframes = try reader.boolean(0) ?? parser.baseOptions.videoThumbnailKeyframes
        },
        ProcessingOption(["video_thumbnail_tile", "vtt"]) { (_, reader, options) throws(ProxyError) in
            options.videoFrameLayout = try reader.videoFrameLayout(animation: false)
        },
        ProcessingOption(["video_thumbnail_animation", "vta"]) { (_, reader, options) throws(ProxyError) in
            options.videoFrameLayout = try reader.videoFrameLayout(animation: true)
        },
        ProcessingOption(["preserve_hdr", "ph"], arguments: 1) { (parser, reader, options) throws(ProxyError) in
            options.preserveHDR = try reader.boolean(0) ?? parser.baseOptions.preserveHDR
        },
        ProcessingOption(["disable_animation", "da"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.disableAnimation = try reader.boolean(0) ?? false
        },
        ProcessingOption([
            "max_src_resolution", "msr", "max_src_file_size", "msfs", "max_animation_frames", "maf", "max_animation_frame_resolution",
            "mafr", "max_result_dimension", "mrd",
        ]) { (parser, reader, options) throws(ProxyError) in
            try parser.applySecurity(reader.option, &reader, to: &options.security)
        },
    ]
}
