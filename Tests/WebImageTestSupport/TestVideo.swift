package import Foundation
package import WebImage
import WebImageTesting

/// Videos the tests make with Debian's `ffmpeg` command at run time: three one-second segments
/// of solid colour (``colors``: red, green, blue), 64x48 at 10 frames a second, in the codec and
/// container asked.
package enum TestVideo {
    /// The segments' colours, one a second, as RGB.
    package static let colors: [[Int]] = [[200, 30, 40], [30, 200, 40], [40, 40, 200]]

    /// A codec and the container it is written in.
    package enum Codec: String, Sendable, CaseIterable {
        case h264, hevc, vp8, vp9, av1, quickTime, mpeg4

        /// The file's extension.
        package var fileExtension: String {
            switch self {
            case .h264, .hevc, .mpeg4: "mp4"
            case .vp8, .vp9, .av1: "webm"
            case .quickTime: "mov"
            }
        }

        /// ffmpeg's encoder arguments: lossless or nearly, so that the colours come back within a few levels.
        var arguments: [String] {
            switch self {
            case .h264, .quickTime: ["-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "-sc_threshold", "0"]
            case .hevc: ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "lossless=1:scenecut=0:log-level=error"]
            case .vp8: ["-c:v", "libvpx", "-crf", "4", "-b:v", "2M"]
            case .vp9: ["-c:v", "libvpx-vp9", "-lossless", "1"]
            case .av1: ["-c:v", "libaom-av1", "-cpu-used", "8", "-crf", "4"]
            case .mpeg4: ["-c:v", "mpeg4", "-q:v", "2"]
            }
        }
    }

    /// Makes `name` in `directory`: a keyframe every `keyframeInterval` frames; `extra` goes
    /// before the output (`-metadata:s:v:0 rotate=90`, say); `seconds` segments, cycling the colours.
    package static func make(
        _ name: String, in directory: TemporaryDirectory, codec: Codec = .h264, keyframeInterval: Int = 10, seconds: Int = 3,
        size: String = "64x48", extra: [String] = []
    ) async throws -> URL {
        let output = directory.url.appendingPathComponent("\(name).\(codec.fileExtension)")
        var arguments = ["-v", "error", "-y"]
        for index in 0..<seconds {
            let color = colors[index % colors.count].map { String(format: "%02X", $0) }.joined()
            arguments += ["-f", "lavfi", "-i", "color=c=0x\(color):s=\(size):r=10:d=1"]
        }
        let inputs = (0..<seconds).map { "[\($0):v]" }.joined()
        arguments += ["-filter_complex", "\(inputs)concat=n=\(seconds):v=1:a=0,format=yuv420p"]
        arguments += codec.arguments + ["-g", String(keyframeInterval)] + extra + [output.path]
        try await ffmpeg(arguments, in: directory, for: name)
        return output
    }

    /// Makes `hdr.mp4` in `directory`: one second of one colour, 64x48, as 10-bit H.265 tagged
    /// BT.2020 and PQ (SMPTE ST 2084). Its red code, 200/255, is about 1,400 cd/m². With
    /// `statedPeak`, x265 states that content light level (max-cll) in an SEI message.
    package static func makePQ(in directory: TemporaryDirectory, statedPeak: Int? = nil) async throws -> URL {
        let output = directory.url.appendingPathComponent("hdr.mp4")
        let parameters = "log-level=error" + (statedPeak.map { ":max-cll=\($0),400" } ?? "")
        try await ffmpeg(
            [
                "-v", "error", "-f", "lavfi", "-i", "color=c=0xC8A050:s=64x48:r=10:d=1", "-vf", "format=yuv420p10le", "-c:v", "libx265",
                "-x265-params", parameters, "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc",
                output.path,
            ], in: directory, for: "hdr")
        return output
    }

    /// Runs Debian's `ffmpeg` with `arguments` (its errors in the thrown error).
    package static func ffmpeg(_ arguments: [String], in directory: TemporaryDirectory, for name: String) async throws {
        let log = directory.url.appendingPathComponent("\(name).ffmpeg.log")
        let process = try ChildProcess(URL(fileURLWithPath: "/usr/bin/ffmpeg"), arguments, standardError: log)
        let status = try await process.waitForExit(timeout: .seconds(120))
        guard status.status == 0 else {
            let errors = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw TestVideoError(description: "ffmpeg (Debian's ffmpeg package) failed making \(name): \(errors.suffix(800))")
        }
    }

    /// The RGB of `image`'s frame at (`x`, `y`), by default its middle pixel.
    package static func color(of image: Image, frame: Int = 0, x: Int? = nil, y: Int? = nil) -> [Int] {
        let pixels = image.frames[frame].pixels
        let pixel = pixels.pixel(x: x ?? pixels.width / 2, y: y ?? pixels.height / 2)
        return [Int(pixel.red), Int(pixel.green), Int(pixel.blue)]
    }

    /// Whether `pixel` (RGB or RGBA) is within `tolerance` levels of `expected` in every channel.
    package static func matches(_ pixel: [Int], _ expected: [Int], tolerance: Int = 10) -> Bool {
        zip(pixel, expected).allSatisfy { abs($0 - $1) <= tolerance }
    }
}

/// ffmpeg could not make a test video.
package struct TestVideoError: Error, CustomStringConvertible {
    package let description: String
}
