import ArgumentParser
import Foundation
import WebImage

/// `webimage convert`: a local file through the coders and transformers to another file.
struct ConvertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert a local image file: format, quality, thumbnail, transforms.",
        discussion: """
            The output is upright (the EXIF orientation applied) unless --keep-orientation. PNG \
            output is straight (not premultiplied) RGBA. An animated input written to a still \
            format (PNG, JPEG) gives its first frame; GIF and WebP keep the animation. The output \
            format comes from --format, else OUT's extension.

            Examples:
              webimage convert photo.jpg photo.webp --quality 80
              webimage convert photo.jpg thumb.png --thumbnail 256x256 --transform round:12
              webimage convert animation.gif poster.png
              webimage convert clip.mp4 poster.jpg --second 2.5
            """
    )

    @Argument(help: "The image file to read.")
    var input: String

    @Argument(help: "The file to write.")
    var output: String

    @Option(
        help: ArgumentHelp(
            "Output format: \(ImageOutput.formatNames) (default: from OUT's extension).", valueName: "FORMAT"))
    var format: String?

    @OptionGroup var shaping: ImageShapingOptions

    @OptionGroup(title: "Encoding") var encoding: EncodingOptions

    @Flag(help: "Keep the stored pixels and their EXIF orientation instead of turning the image upright.")
    var keepOrientation = false

    @Flag(help: "Keep the source's colour profile (embedded in the output) instead of converting to sRGB.")
    var keepColorProfile = false

    @Flag(help: "Write the source's EXIF into the output (JPEG, PNG, WebP), its orientation set to the output's.")
    var keepExif = false

    @Flag(
        help: """
            Keep more than 8 bits a sample (a 16-bit PNG, JPEG XL or TIFF, a 10/12-bit AVIF or HEIF) in an output that \
            holds them (PNG, AVIF, JPEG XL, TIFF), in the source's transfer and primaries: the proxy's preserve_hdr.
            """)
    var keepBitDepth = false

    @Flag(help: "Convert what arrived of an image whose data ends early (the rest grey or transparent) instead of failing.")
    var acceptTruncated = false

    @OptionGroup(title: "Videos") var video: VideoFrameOptions

    @OptionGroup var outputOptions: OutputOptions

    func validate() throws {
        guard try ImageOutput.parseFormat(format) != nil || ImageOutput.format(forExtension: output) != nil else {
            throw ValidationError("cannot tell the output format from \"\(output)\": give --format \(ImageOutput.formatNames)")
        }
        try shaping.check()
        try encoding.check()
    }

    func run() async throws {
        outputOptions.bootstrapLogging()
        guard let data = FileManager.default.contents(atPath: input) else { throw CommandFailure("cannot read \(input)") }
        var image: Image
        let thumbnail = try shaping.thumbnail().map { ThumbnailSize(width: $0.width, height: $0.height) }
        var options = DecodeOptions(
            thumbnail: thumbnail, acceptsTruncatedImages: acceptTruncated, keepsColorProfile: keepColorProfile, keepsEXIF: keepExif)
        options.keepsHighBitDepth = keepBitDepth
        do {
            image = try CodersManager.shared.decode(data, options: video.applied(to: options))
        } catch {
            throw CommandFailure("cannot decode \(input): \(error.message ?? "\(error.code)")")
        }
        if !keepOrientation, let upright = OrientationTransformer().transform(image, forKey: input) { image = upright }
        if let transformer = try shaping.transformer() {
            guard let transformed = transformer.transform(image, forKey: input) else {
                throw CommandFailure("\(transformer.transformerKey) gave no image")
            }
            image = transformed
        }
        let writer = ImageOutput(format: try ImageOutput.parseFormat(format), options: encoding.options())
        let target = writer.format ?? ImageOutput.format(forExtension: output)!
        let bytes = try writer.encode(image, as: target)
        do {
            try bytes.write(to: URL(fileURLWithPath: output))
        } catch {
            throw CommandFailure("cannot write \(output): \(error.localizedDescription)")
        }
        if outputOptions.json {
            struct Report: Encodable {
                let input: String, output: String, format: String, width: Int, height: Int, frames: Int, bytes: Int
                let warnings: [String], partial: Bool
            }
            print(
                jsonLine(
                    Report(
                        input: input, output: output, format: target.rawValue, width: image.pixelWidth, height: image.pixelHeight,
                        frames: target == .gif || target == .webP ? image.frames.count : 1, bytes: bytes.count, warnings: image.warnings,
                        partial: image.isPartial)))
        } else {
            let partial = image.isPartial ? " (partial: the data ends before the image)" : ""
            print("\(input) -> \(output): \(target.rawValue) \(image.pixelWidth)x\(image.pixelHeight), \(bytes.count) bytes\(partial)")
        }
    }
}
