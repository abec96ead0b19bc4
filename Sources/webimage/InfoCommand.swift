import ArgumentParser
import Foundation
import WebImage

/// `webimage info`: what an image file or URL holds.
struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show an image's format, size, frames, loop count, frame durations and EXIF orientation.",
        discussion: """
            With --json the fields are: source, format, width, height, frames, loopCount, \
            durations (milliseconds per frame), orientation (EXIF value 1-8), bytes, warnings \
            (what the decoder worked around, as browsers do: stray bytes in a JPEG, a damaged \
            ancillary PNG chunk, a GIF without its trailer), partial (with --accept-truncated, \
            whether the data ended before the image) and, for AVIF, PNG, JPEG, HEIF, JPEG XL, \
            TIFF and videos, color: the file's bitDepth, primaries, transfer (names such as bt2020 and pq, or H.273 code \
            points), matrix, hdr (PQ or HLG, tone-mapped to SDR when decoded), gainMap, \
            gainMapMetadata (an Ultra HDR JPEG's hdrgm values, or the same values from ISO 21496-1 \
            metadata or an iPhone's Apple gain map headroom; gains and capacities in log2), and peakLuminance \
            (cd/m², when an HDR video states its content light level or mastering display peak).

            A video (MP4, QuickTime, WebM; in a build with the Video trait) is described by the \
            frame --second takes: its size, orientation and colour.

            Examples:
              webimage info photo.jpg
              webimage info https://example.com/animation.gif --json
            """
    )

    @Argument(help: "A file path or a URL.")
    var source: String

    @Flag(help: "Show what arrived of an image whose data ends early, instead of failing.")
    var acceptTruncated = false

    @OptionGroup(title: "Videos") var video: VideoFrameOptions

    @OptionGroup var outputOptions: OutputOptions

    struct Report: Encodable {
        let source: String
        let format: String
        let width: Int
        let height: Int
        let frames: Int
        let loopCount: Int
        let durations: [Double]
        let orientation: Int
        let bytes: Int
        let warnings: [String]
        let partial: Bool
        let color: Color?

        /// The source's ``ColorDescription``.
        struct Color: Encodable {
            let bitDepth: Int
            let primaries: String?
            let transfer: String?
            let matrix: Int?
            let hdr: Bool
            let gainMap: Bool
            let gainMapMetadata: GainMapValues?
            let peakLuminance: Int?

            init(_ description: ColorDescription) {
                (bitDepth, primaries, transfer, matrix) =
                    (description.bitDepth, description.primariesName, description.transferName, description.matrix)
                (hdr, gainMap) = (description.isHDR, description.hasGainMap)
                gainMapMetadata = description.gainMap.map(GainMapValues.init)
                peakLuminance = description.peakLuminance
            }
        }

        /// A ``GainMapMetadata``'s values.
        struct GainMapValues: Encodable {
            let gainMapMin, gainMapMax, gamma, offsetSDR, offsetHDR: [Double]
            let hdrCapacityMin, hdrCapacityMax: Double
            let baseRenditionIsHDR: Bool

            init(_ metadata: GainMapMetadata) {
                (gainMapMin, gainMapMax, gamma) = (metadata.gainMapMin, metadata.gainMapMax, metadata.gamma)
                (offsetSDR, offsetHDR) = (metadata.offsetSDR, metadata.offsetHDR)
                (hdrCapacityMin, hdrCapacityMax, baseRenditionIsHDR) =
                    (metadata.hdrCapacityMin, metadata.hdrCapacityMax, metadata.baseRenditionIsHDR)
            }
        }
    }

    func run() async throws {
        outputOptions.bootstrapLogging()
        let data = try await load()
        let image: Image
        do {
            image = try CodersManager.shared.decode(
                data, options: video.applied(to: DecodeOptions(acceptsTruncatedImages: acceptTruncated)))
        } catch {
            throw CommandFailure("cannot decode \(source): \(error.message ?? "\(error.code)")")
        }
        let report = Report(
            source: source, format: (image.sourceFormat ?? ImageFormat(sniffing: data))?.rawValue ?? "unknown",
            width: image.pixelWidth, height: image.pixelHeight, frames: image.frames.count, loopCount: image.loopCount,
            durations: image.isAnimated ? image.frames.map { $0.duration.milliseconds } : [], orientation: image.orientation.rawValue,
            bytes: data.count, warnings: image.warnings, partial: image.isPartial, color: image.sourceColor.map(Report.Color.init)
        )
        if outputOptions.json {
            print(jsonLine(report))
            return
        }
        print("source:      \(report.source)")
        print("format:      \(report.format)")
        print("size:        \(report.width)x\(report.height)")
        print("frames:      \(report.frames)")
        if image.isAnimated {
            print("loop count:  \(report.loopCount == 0 ? "forever" : String(report.loopCount))")
            print("durations:   " + report.durations.map { String(format: "%.0f ms", $0) }.joined(separator: ", "))
        }
        print("orientation: \(report.orientation) (\(image.orientation))")
        print("bytes:       \(report.bytes)")
        if let color = report.color { print("colour:      \(Self.describe(color))") }
        if report.partial { print("partial:     yes, the data ends before the image") }
        for warning in report.warnings { print("warning:     \(warning)") }
    }

    /// "12-bit, bt2020 primaries, pq transfer (HDR, tone-mapped to SDR)".
    private static func describe(_ color: Report.Color) -> String {
        var parts = ["\(color.bitDepth)-bit"]
        if let primaries = color.primaries { parts.append("\(primaries) primaries") }
        if let transfer = color.transfer { parts.append("\(transfer) transfer") }
        if let peak = color.peakLuminance { parts.append("peak \(peak) cd/m²") }
        if let values = color.gainMapMetadata {
            let boost = values.gainMapMax.map { String($0) }.joined(separator: "/")
            parts.append("a gain map (shown as its SDR base; log2 content boost up to \(boost), HDR capacity \(values.hdrCapacityMax))")
        } else if color.gainMap {
            parts.append("a gain map (shown as its SDR base)")
        }
        return parts.joined(separator: ", ") + (color.hdr ? " (HDR, tone-mapped to SDR)" : "")
    }

    private func load() async throws -> Data {
        if let url = URL(string: source), let scheme = url.scheme,
            ["http", "https", "data", "file", "s3", "gs"].contains(scheme.lowercased())
        {
            let downloader = ImageDownloader()
            let buckets = [EnvironmentBucketLoader.s3(), EnvironmentBucketLoader.gcs()]
            func shutdown() async {
                try? await downloader.shutdown()
                for bucket in buckets { try? await bucket.shutdown() }
            }
            do {
                let loaded = try await LoadersManager(loaders: [DataURLLoader(), FileURLLoader(), downloader] + buckets).loadData(url)
                await shutdown()
                return loaded.data
            } catch {
                await shutdown()
                throw CommandFailure("cannot load \(source): \(error)")
            }
        }
        guard let data = FileManager.default.contents(atPath: source) else { throw CommandFailure("cannot read \(source)") }
        return data
    }
}
