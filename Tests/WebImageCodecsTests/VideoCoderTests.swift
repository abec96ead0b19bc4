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

    /// hdr_reference.py's patches (12-bit PQ and HLG codes in BT.2020, its untagged 16-bit PNG)
    /// made into a 10-bit video by ffmpeg, each patch 16 pixels wide: in RGB (`gbrp10`, lossless,
    /// so each sample is the reference's code rounded to 10 bits) or in 4:2:0 Y'CbCr with
    /// BT.2020's matrix, as cameras write HDR.
    static func hdrVideo(
        _ name: String, transfer: String, codec: [String], fileExtension: String, subsampled: Bool, in directory: TemporaryDirectory
    ) async throws -> URL {
        let source = directory.url.appendingPathComponent("\(name).png")
        let layout = subsampled ? "\(name)-420" : "\(name)-rgb"
        let output = directory.url.appendingPathComponent("\(layout)-\(codec[1]).\(fileExtension)")
        let scale =
            "scale=iw*4:ih*4:flags=neighbor"
            + (subsampled ? ":out_color_matrix=bt2020:out_range=tv,format=yuv420p10le" : ",format=gbrp10le")
        let tags = ["-color_primaries", "bt2020", "-color_trc", transfer, "-colorspace", subsampled ? "bt2020nc" : "rgb"]
        try await TestVideo.ffmpeg(
            ["-v", "error", "-y", "-i", source.path, "-vf", scale] + codec + tags + (subsampled ? ["-color_range", "tv"] : []) + [
                output.path
            ],
            in: directory, for: layout)
        return output
    }

    /// The largest difference, in 8-bit levels, between `image`'s patches (16 pixels wide) and
    /// `expected`, and the patches' pixels.
    static func compare(_ image: Image, _ expected: [[Int]]) -> (largest: Int, pixels: [[Int]]) {
        let pixels = expected.indices.map { TestVideo.color(of: image, x: $0 * 16 + 8, y: 8) }
        let largest = zip(pixels, expected).map { zip($0, $1).map { abs($0 - $1) }.max() ?? 0 }.max() ?? 0
        return (largest, pixels)
    }

    static let lossless265 = "lossless=1:log-level=error"

    @Test("an HDR video's frame (PQ, HLG; H.265 and VP9 at 10 bits) is tone-mapped as colour-science renders it, not clipped")
    func hdrFramesToneMapped() async throws {
        let directory = try TemporaryDirectory("video-hdr")
        let reference = try await HDRRenderingTests.reference(in: directory)
        // H.265 states PQ's content light level as its reference's peak (x265's max-cll, an SEI
        // message): the tone curve starts there. VP9 and HLG state none.
        let codecs: [([String], String)] = [
            (["-c:v", "libx265", "-x265-params", Self.lossless265 + ":max-cll=1000,400"], "mp4"),
            (["-c:v", "libvpx-vp9", "-lossless", "1"], "webm"),
        ]
        for (name, picture, transfer) in [("pq", reference.pq, "smpte2084"), ("hlg", reference.hlg, "arib-std-b67")] {
            for (codec, fileExtension) in codecs {
                for subsampled in [false, true] where !(name == "pq" && subsampled && fileExtension == "webm") {
                    let video = try await Self.hdrVideo(
                        name, transfer: transfer, codec: codec, fileExtension: fileExtension, subsampled: subsampled, in: directory)
                    let image = try Self.decode(video)
                    let code = name == "pq" ? ColorDescription.perceptualQuantizer : ColorDescription.hybridLogGamma
                    let peak = fileExtension == "mp4" ? 1000 : nil
                    #expect(
                        image.sourceColor
                            == ColorDescription(bitDepth: 10, primaries: 9, transfer: code, matrix: subsampled ? 9 : 0, peakLuminance: peak)
                    )
                    #expect(image.warnings.isEmpty && !image.pixels.isHighBitDepth)
                    let (largest, pixels) = Self.compare(image, picture.expected)
                    // Measured: RGB 1 level (the codes rounded from 12 to 10 bits); 4:2:0 with
                    // BT.2020's matrix 3.
                    #expect(largest <= (subsampled ? 4 : 2), "\(video.lastPathComponent): \(pixels) against \(picture.expected)")
                    // Not the code values shown as sRGB, which is what the frames were before.
                    let white = name == "pq" ? 5 : 3
                    #expect(pixels[white][0] - picture.asSRGB[white][0] > 30, "\(video.lastPathComponent): \(pixels[white])")
                }
            }
        }
    }

    @Test("a PQ video that states no light level is tone-mapped from its brightest pixel: 4:2:0's overshoot at saturated edges dims it")
    func hdrFramePeakFromPixels() async throws {
        let directory = try TemporaryDirectory("video-hdr-peak")
        let reference = try await HDRRenderingTests.reference(in: directory)
        func frame(_ parameters: String) async throws -> Image {
            try Self.decode(
                try await Self.hdrVideo(
                    "pq", transfer: "smpte2084", codec: ["-c:v", "libx265", "-x265-params", parameters], fileExtension: "mp4",
                    subsampled: true, in: directory))
        }
        let stated = try await frame(Self.lossless265 + ":max-cll=1000,400")
        let unstated = try await frame(Self.lossless265)
        #expect(stated.sourceColor?.peakLuminance == 1000 && unstated.sourceColor?.peakLuminance == nil)
        #expect(Self.compare(stated, reference.pq.expected).largest <= 4)
        // The red, green and blue patches at 1,000 cd/m² meet in 4:2:0 chroma: converted back,
        // their edges hold components brighter than 1,000 cd/m², the peak the curve then starts
        // from (measured: reference white 213, against 229 from the stated 1,000).
        let white = (
            stated: TestVideo.color(of: stated, x: 5 * 16 + 8, y: 8)[0], unstated: TestVideo.color(of: unstated, x: 5 * 16 + 8, y: 8)[0]
        )
        #expect(white.unstated < white.stated - 5, "\(white)")
    }

    @Test("an HDR video's frames taken together are tone-mapped from one peak: the same grey comes out the same in each")
    func hdrFramesShareAPeak() async throws {
        let directory = try TemporaryDirectory("video-hdr-together")
        // PQ codes, 8-bit values widened to 10: a second of grey 0x80 (about 92 cd/m²) with a
        // box of 0xF0 (about 6,000), then a second of the grey alone; no stated light level.
        let video = directory.url.appendingPathComponent("together.mp4")
        try await TestVideo.ffmpeg(
            [
                "-v", "error", "-f", "lavfi", "-i", "color=c=0x808080:s=64x48:r=10:d=1,drawbox=x=0:y=0:w=16:h=16:color=0xF0F0F0:t=fill",
                "-f", "lavfi", "-i", "color=c=0x808080:s=64x48:r=10:d=1", "-filter_complex", "[0][1]concat=n=2:v=1,format=yuv420p10le",
                "-c:v", "libx265", "-x265-params", Self.lossless265, "-color_primaries", "bt2020", "-color_trc", "smpte2084",
                "-colorspace", "bt2020nc", video.path,
            ], in: directory, for: "together")
        let together = try Self.decode(video, VideoFrameSelection(second: 0, count: 2, step: 1.5))
        let (bright, dim) = (
            try Self.decode(video, VideoFrameSelection(second: 0)), try Self.decode(video, VideoFrameSelection(second: 1.5))
        )
        #expect(together.frames.count == 2 && !together.isHighBitDepth && together.sourceColor?.peakLuminance == nil)
        let grey = (
            first: TestVideo.color(of: together, frame: 0, x: 48, y: 32), second: TestVideo.color(of: together, frame: 1, x: 48, y: 32)
        )
        #expect(TestVideo.matches(grey.first, grey.second, tolerance: 1), "\(grey)")
        // The first frame holds the brightest light: its own peak is the one they share.
        #expect(
            TestVideo.matches(
                TestVideo.color(of: together, frame: 0, x: 48, y: 32), TestVideo.color(of: bright, x: 48, y: 32), tolerance: 1))
        // Alone, the dim frame is tone-mapped from its own, lower peak: brighter (measured 180
        // against 167 together).
        let alone = TestVideo.color(of: dim, x: 48, y: 32)
        #expect(alone[0] >= grey.second[0] + 8, "alone \(alone), together \(grey.second)")
    }

    @Test("with keepsHighBitDepth a 10-bit HDR video's frame stays 16-bit in its own transfer, the source's codes within a 10-bit level")
    func hdrFrameKept() async throws {
        let directory = try TemporaryDirectory("video-hdr-kept")
        let reference = try await HDRRenderingTests.reference(in: directory)
        let video = try await Self.hdrVideo(
            "pq", transfer: "smpte2084", codec: ["-c:v", "libx265", "-x265-params", Self.lossless265], fileExtension: "mp4",
            subsampled: false, in: directory)
        var options = DecodeOptions()
        options.keepsHighBitDepth = true
        let image = try CodersManager.shared.decode(try Data(contentsOf: video), options: options)
        let source = try CodersManager.shared.decode(
            try Data(contentsOf: directory.url.appendingPathComponent("pq.png")), options: options)
        #expect(image.pixels.isHighBitDepth && source.pixels.isHighBitDepth)
        #expect(image.sourceColor?.transfer == ColorDescription.perceptualQuantizer)
        var largest = 0
        for index in reference.pq.expected.indices {
            let ours = image.pixels.pixel16(x: index * 16 + 8, y: 8)
            let theirs = source.pixels.pixel16(x: index * 4 + 1, y: 1)
            for (a, b) in zip([ours.red, ours.green, ours.blue], [theirs.red, theirs.green, theirs.blue]) {
                largest = max(largest, abs(Int(a) - Int(b)))
            }
        }
        // A 10-bit level is 64 of 65,535.
        #expect(largest <= 64, "\(largest)")
        // Written as a 16-bit PNG with the stream's cICP; an 8-bit SDR decode of the same frame
        // by default.
        let png = try CodersManager.shared.encode(image, as: .png)
        let written = try CodersManager.shared.decode(png, options: options)
        #expect(written.pixels.isHighBitDepth && written.sourceColor?.transfer == ColorDescription.perceptualQuantizer)
        #expect(try !Self.decode(video).pixels.isHighBitDepth)
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
