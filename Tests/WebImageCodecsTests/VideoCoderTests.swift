import Foundation
import Testing
import WebImageCodecs
import WebImageCore
import WebImageTestSupport

/// Videos as images: the frame asked for, from the containers and codecs named in issue 62 (MP4
/// and QuickTime with H.264 and H.265, WebM with VP8, VP9 and AV1), made at run time by Debian's
/// `ffmpeg` (``TestVideo``: a red, a green and a blue second, 10 frames a second). Without the
/// Video trait a video is recognised and refused.
@Suite("Video frames")
struct VideoCoderTests {
    static func decode(_ url: URL, _ selection: VideoFrameSelection = VideoFrameSelection(), limits: DecodeLimits = DecodeLimits())
        throws -> Image
    {
        var options = DecodeOptions(limits: limits)
        options.video = selection
        return try CodersManager.shared.decode(try Data(contentsOf: url), options: options)
    }

    @Test("MP4, QuickTime and WebM are recognised by their first bytes, whatever the build")
    func sniffing() async throws {
        let directory = try TemporaryDirectory("video-sniff")
        for (codec, format) in [(TestVideo.Codec.h264, ImageFormat.mp4), (.quickTime, .quickTime), (.vp9, .webM)] {
            let data = try Data(contentsOf: try await TestVideo.make(codec.rawValue, in: directory, codec: codec, seconds: 1))
            #expect(ImageFormat(sniffing: data) == format, "\(codec)")
            #expect(format.isVideo)
        }
        #expect(ImageFormat(mimeType: "video/webm") == .webM)
        #expect(ImageFormat(fileExtension: "mov") == .quickTime)
        #expect(!ImageFormat.avif.isVideo)
    }

    #if Video
    @Test(
        "the first keyframe by default; the frame shown at a time; the last one past the end",
        arguments: TestVideo.Codec.allCases.filter { $0 != .mpeg4 })
    func frameAtATime(codec: TestVideo.Codec) async throws {
        let directory = try TemporaryDirectory("video-\(codec)")
        let video = try await TestVideo.make("clip", in: directory, codec: codec)
        let first = try Self.decode(video)
        #expect(first.pixelWidth == 64 && first.pixelHeight == 48)
        #expect(first.frames.count == 1 && !first.hasAlpha)
        #expect(first.sourceFormat == ImageFormat(fileExtension: codec.fileExtension))
        #expect(TestVideo.matches(TestVideo.color(of: first), TestVideo.colors[0]), "\(codec) first: \(TestVideo.color(of: first))")
        for (second, expected) in [(1.5, 1), (2.2, 2), (0.3, 0), (60, 2)] {
            let image = try Self.decode(video, VideoFrameSelection(second: second))
            #expect(
                TestVideo.matches(TestVideo.color(of: image), TestVideo.colors[expected]),
                "\(codec) at \(second) s: \(TestVideo.color(of: image))")
        }
    }

    @Test("keyframes only: the last keyframe at or before the time, with nothing between decoded")
    func keyframes() async throws {
        let directory = try TemporaryDirectory("video-keyframes")
        // A keyframe every 2 seconds: at 1.5 s the keyframe is the red one at 0.
        let video = try await TestVideo.make("sparse", in: directory, keyframeInterval: 20)
        let exact = try Self.decode(video, VideoFrameSelection(second: 1.5))
        let keyframe = try Self.decode(video, VideoFrameSelection(second: 1.5, keyframesOnly: true))
        let later = try Self.decode(video, VideoFrameSelection(second: 2.5, keyframesOnly: true))
        #expect(TestVideo.matches(TestVideo.color(of: exact), TestVideo.colors[1]))
        #expect(TestVideo.matches(TestVideo.color(of: keyframe), TestVideo.colors[0]))
        #expect(TestVideo.matches(TestVideo.color(of: later), TestVideo.colors[2]))
    }

    @Test("keyframes for long steps: keyframes only when the step is longer than the longest interval between them")
    func keyframesForLongSteps() async throws {
        let directory = try TemporaryDirectory("video-auto-keyframes")
        // Six seconds (red, green, blue, red, green, blue), a keyframe every 2 s.
        let video = try await TestVideo.make("six", in: directory, keyframeInterval: 20, seconds: 6)
        func colors(step: Double, auto: Bool) throws -> [[Int]] {
            var selection = VideoFrameSelection(second: 1.5, count: 2, step: step)
            selection.keyframesForLongSteps = auto
            let image = try Self.decode(video, selection)
            return (0..<image.frames.count).map { TestVideo.color(of: image, frame: $0) }
        }
        let (red, green, blue) = (TestVideo.colors[0], TestVideo.colors[1], TestVideo.colors[2])
        // 1.5 s and 3.7 s: green and red exactly; the keyframes before them (0 s, 2 s) are red and blue.
        #expect(zip(try colors(step: 2.2, auto: false), [green, red]).allSatisfy { TestVideo.matches($0, $1) })
        #expect(zip(try colors(step: 2.2, auto: true), [red, blue]).allSatisfy { TestVideo.matches($0, $1) })
        // A step shorter than the interval stays exact.
        #expect(zip(try colors(step: 1, auto: true), [green, blue]).allSatisfy { TestVideo.matches($0, $1) })
    }

    @Test("several frames a step apart make an animation; a negative step spreads them over the video; a short video gives fewer")
    func frames() async throws {
        let directory = try TemporaryDirectory("video-frames")
        let video = try await TestVideo.make("clip", in: directory, codec: .vp9)
        let stepped = try Self.decode(video, VideoFrameSelection(second: 0.5, count: 3, step: 1))
        #expect(stepped.frames.count == 3)
        #expect(stepped.frames.allSatisfy { $0.duration == .seconds(1) })
        for index in 0..<3 { #expect(TestVideo.matches(TestVideo.color(of: stepped, frame: index), TestVideo.colors[index])) }
        let spread = try Self.decode(video, VideoFrameSelection(count: 3, step: -1))
        #expect(spread.frames.count == 3)
        #expect(TestVideo.matches(TestVideo.color(of: spread, frame: 2), TestVideo.colors[2]))
        let short = try Self.decode(video, VideoFrameSelection(second: 1.5, count: 5, step: 1))
        #expect(short.frames.count == 2)
    }

    @Test("a portrait video's display matrix is its orientation: upright as ffmpeg's own autorotation shows it", arguments: [90, 180, 270])
    func rotation(degrees: Int) async throws {
        let directory = try TemporaryDirectory("video-rotation")
        // A frame with a blue quarter at its top left, so that each turn and flip looks different.
        let plain = directory.url.appendingPathComponent("plain.mp4")
        try await TestVideo.ffmpeg(
            [
                "-v", "error", "-f", "lavfi", "-i", "color=c=0xC81E28:s=64x48:r=10:d=1", "-vf",
                "drawbox=x=0:y=0:w=32:h=24:color=0x2828C8:t=fill",
                "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", plain.path,
            ], in: directory, for: "plain")
        // The tag phones write, as a display matrix (only a remux writes it with FFmpeg 5.1).
        let turned = directory.url.appendingPathComponent("turned.mp4")
        try await TestVideo.ffmpeg(
            ["-v", "error", "-i", plain.path, "-c", "copy", "-metadata:s:v:0", "rotate=\(degrees)", turned.path], in: directory,
            for: "turned")
        // ffmpeg applies the display matrix itself when it decodes (its autorotate): the reference.
        let reference = directory.url.appendingPathComponent("upright.png")
        try await TestVideo.ffmpeg(["-v", "error", "-i", turned.path, "-frames:v", "1", reference.path], in: directory, for: "upright")
        let expected = try CodersManager.shared.decode(try Data(contentsOf: reference))
        let decoded = try Self.decode(turned)
        let upright = try #require(OrientationTransformer().transform(decoded, forKey: ""))
        #expect(upright.pixelWidth == expected.pixelWidth && upright.pixelHeight == expected.pixelHeight, "\(decoded.orientation)")
        for (x, y) in [
            (2, 2), (upright.pixelWidth - 3, 2), (2, upright.pixelHeight - 3), (upright.pixelWidth - 3, upright.pixelHeight - 3),
        ] {
            let ours = upright.pixels.pixel(x: x, y: y)
            let theirs = expected.pixels.pixel(x: x, y: y)
            #expect(abs(Int(ours.blue) - Int(theirs.blue)) < 40, "\(degrees)° at \(x),\(y): \(ours) against ffmpeg's \(theirs)")
        }
        #expect(decoded.sourceColor?.bitDepth == 8)
        #expect(decoded.sourceColor?.isHDR == false)
    }

    @Test("refused with a clear error: another codec, over the pixel limit, too many frames to decode, out of time")
    func bounds() async throws {
        let directory = try TemporaryDirectory("video-bounds")
        let mpeg4 = try await TestVideo.make("mpeg4", in: directory, codec: .mpeg4, seconds: 1)
        #expect(throws: WebImageError(.unsupportedFormat)) { try Self.decode(mpeg4) }
        let video = try await TestVideo.make("long-gop", in: directory, keyframeInterval: 100)
        #expect(throws: WebImageError(.tooLarge)) { try Self.decode(video, limits: DecodeLimits(maximumPixelCount: 3000)) }
        // Three frames of 64x48 held at once: 9,216 pixels.
        #expect(throws: WebImageError(.tooLarge)) {
            try Self.decode(video, VideoFrameSelection(count: 3, step: 1), limits: DecodeLimits(maximumPixelCount: 9000))
        }
        #expect(throws: WebImageError(.tooLarge)) { try Self.decode(video, VideoFrameSelection(second: 2.5, maximumDecodedFrames: 10)) }
        #expect(throws: WebImageError(.tooLarge)) { try Self.decode(video, VideoFrameSelection(timeLimit: .zero)) }
        #expect(throws: WebImageError(.tooLarge)) { try Self.decode(video, limits: DecodeLimits(maximumInputSize: 100)) }
    }

    @Test("damaged files: cut short, garbled, an MP4 header over noise: an error or a frame, never a crash or a hang")
    func damaged() async throws {
        let directory = try TemporaryDirectory("video-damaged")
        let faststart = try await TestVideo.make("faststart", in: directory, extra: ["-movflags", "+faststart"])
        let plain = try await TestVideo.make("plain", in: directory, codec: .vp8)
        var random = SplitMix64(seed: 62)
        for url in [faststart, plain] {
            let data = try Data(contentsOf: url)
            var cases = [data.prefix(data.count / 2), data.prefix(40), data.prefix(data.count - 7)]
            for _ in 0..<20 {
                var garbled = data
                for _ in 0..<8 { garbled[Int(random.next() % UInt64(garbled.count))] = UInt8(truncatingIfNeeded: random.next()) }
                cases.append(garbled)
            }
            for bytes in cases {
                var options = DecodeOptions()
                options.video = VideoFrameSelection(second: 2.5)
                do {
                    let image = try CodersManager.shared.decode(Data(bytes), options: options)
                    #expect(image.pixelWidth > 0)
                } catch {
                    #expect([.decodeFailed, .unsupportedFormat, .notAnImage, .tooLarge].contains(error.code), "\(error)")
                }
            }
        }
        // A real ftyp box and noise after it: no container FFmpeg accepts.
        var noise = Data([0, 0, 0, 0x18] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8))
        noise += Data((0..<4096).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        #expect(throws: WebImageError.self) { try CodersManager.shared.decode(noise) }
    }
    #else
    @Test("without the Video trait a video is refused as a format no coder reads")
    func refusedWithoutTheTrait() async throws {
        let directory = try TemporaryDirectory("video-off")
        let video = try await TestVideo.make("clip", in: directory, seconds: 1)
        #expect(throws: WebImageError(.unsupportedFormat)) { try CodersManager.shared.decode(try Data(contentsOf: video)) }
    }
    #endif
}
