import ArgumentParser
import Foundation
import WebImage

/// How `fetch`, `prefetch` and `convert` write an image: the format from `--format`, else from
/// the output file's extension, else the source format, in which case untouched original bytes
/// are written exactly as they came.
struct ImageOutput {
    /// Formats the command writes, by the names `--format` takes.
    static let formats: [String: ImageFormat] = [
        "png": .png, "jpeg": .jpeg, "jpg": .jpeg, "webp": .webP, "gif": .gif, "avif": .avif, "jxl": .jpegXL, "heic": .heic, "tiff": .tiff,
        "tif": .tiff,
    ]

    /// The names `--format` takes, for help and error messages.
    static let formatNames = "png, jpeg, webp, gif, avif, jxl, heic or tiff"

    let format: ImageFormat?
    /// The encoder options asked for; nil when none were, and an unchanged image in its own
    /// format is written as its original bytes.
    let options: EncodeOptions?

    static func parseFormat(_ name: String?) throws -> ImageFormat? {
        guard let name else { return nil }
        guard let format = formats[name.lowercased()] else {
            throw ValidationError("--format takes \(formatNames), not \"\(name)\"")
        }
        return format
    }

    static func format(forExtension path: String) -> ImageFormat? {
        formats[URL(fileURLWithPath: path).pathExtension.lowercased()]
    }

    /// The bytes to write for `image`, whose original bytes are `original` when unchanged.
    func bytes(for image: Image?, original: Data?, sourceFormat: ImageFormat?, path: String?) throws -> (Data, ImageFormat) {
        let wanted = format ?? path.flatMap(Self.format(forExtension:))
        if let original, wanted == nil || wanted == sourceFormat, options == nil {
            return (original, sourceFormat ?? ImageFormat(sniffing: original) ?? .png)
        }
        guard let image else { throw CommandFailure("no decoded image to encode") }
        let target = wanted ?? Self.encodable(sourceFormat)
        return (try encode(image, as: target), target)
    }

    /// The source format when the coders can write it, else PNG.
    static func encodable(_ format: ImageFormat?) -> ImageFormat {
        guard let format, CodersManager.shared.all.contains(where: { $0.canEncode(to: format) }) else { return .png }
        return format
    }

    /// Encodes, keeping animation only where the format has it.
    func encode(_ image: Image, as format: ImageFormat) throws -> Data {
        var still = image
        if format != .gif && format != .webP { still.frames = [image.frames[0]] }
        do {
            return try CodersManager.shared.encode(still, as: format, options: options ?? EncodeOptions())
        } catch {
            throw CommandFailure("cannot encode as \(format.rawValue): \(error)")
        }
    }

    /// The file name for `url` in an output directory, with the extension of `format`: the safe
    /// stem ``FileNamer`` makes, or `image-N` when the URL has none.
    static func fileName(for url: URL, index: Int, format: ImageFormat) -> String {
        let stem = FileNamer.safeStem(of: url.absoluteString)
        return (stem == "image" ? "image-\(index + 1)" : stem) + "." + format.preferredFileExtension
    }
}
