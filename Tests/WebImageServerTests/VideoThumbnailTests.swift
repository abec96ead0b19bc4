import Foundation
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// imgproxy Pro's video thumbnails (docs/usage/processing.mdx, "Video thumbnail second" and
/// "keyframes"; docs/configuration/options.mdx's `IMGPROXY_ENABLE_VIDEO_THUMBNAILS` and
/// `IMGPROXY_VIDEO_THUMBNAIL_*`): a video source gives a frame, processed like any image. The
/// videos are made at run time by Debian's `ffmpeg` (``TestVideo``: red, green, blue seconds).
@Suite("Video thumbnails")
struct VideoThumbnailTests {
    /// The middle pixel's RGB of an answer's image.
    static func middle(_ body: Data) throws -> [Int] {
        TestVideo.color(of: try CodersManager.shared.decode(body))
    }

    /// Runs `body` against a proxy with `configuration` whose origin serves `video` as `/clip.mp4`.
    static func serving(
        _ video: [UInt8], _ configuration: ImageServerConfiguration = enabled(), _ body: (ServerHarness) async throws -> Void
    ) async throws {
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/clip.mp4", .ok(video, contentType: "video/mp4"))
            try await body(harness)
        }
    }

    static func enabled() -> ImageServerConfiguration {
        var configuration = ServerHarness.configuration()
        configuration.enableVideoThumbnails = true
        return configuration
    }

    @Test("off by default: a video source is a 422 that names the setting")
    func offByDefault() async throws {
        let directory = try TemporaryDirectory("vt-off")
        let video = [UInt8](try Data(contentsOf: try await TestVideo.make("clip", in: directory, seconds: 1)))
        try await Self.serving(video, ServerHarness.configuration()) { harness throws in
            let answer = try await harness.get(harness.signedPlain("w:32", "/clip.mp4"))
            #expect(answer.status == 422)
            #expect(answer.text.contains("IMGPROXY_ENABLE_VIDEO_THUMBNAILS"), "\(answer.text)")
        }
    }

    #if Video
    @Test("enabled: the first keyframe by default as a JPEG; vts picks the time, vtk the keyframe before it; resized like any image")
    func frames() async throws {
        let directory = try TemporaryDirectory("vt-on")
        // A keyframe every 2 s: at 1.5 s the exact frame is green, the keyframe before it red.
        let video = [UInt8](try Data(contentsOf: try await TestVideo.make("clip", in: directory, keyframeInterval: 20)))
        try await Self.serving(video) { harness throws in
            let first = try await harness.get(harness.signedPlain("w:32", "/clip.mp4"))
            #expect(first.status == 200, "\(first.text)")
            // The source is no format a result is kept in: the first preferred one (JPEG) is chosen.
            #expect(first.header("Content-Type") == "image/jpeg")
            let image = try CodersManager.shared.decode(first.body)
            #expect(image.pixelWidth == 32 && image.pixelHeight == 24)
            #expect(TestVideo.matches(try Self.middle(first.body), TestVideo.colors[0]))
            for (options, color) in [("vts:1.5", 1), ("video_thumbnail_second:2.5", 2), ("vts:1.5/vtk:1", 0), ("vts:99", 2)] {
                let answer = try await harness.get(harness.signedPlain(options, "/clip.mp4", extension: "png"))
                #expect(answer.status == 200, "\(options): \(answer.text)")
                #expect(TestVideo.matches(try Self.middle(answer.body), TestVideo.colors[color]), "\(options)")
            }
            let refused = try await harness.get(harness.signedPlain("vts:-1", "/clip.mp4"))
            #expect(refused.status == 400)
        }
    }

    @Test("an HDR video: tone-mapped to SDR as the library decodes it; with ph:1 and a PNG result, 16-bit in the stream's PQ")
    func hdrVideo() async throws {
        let directory = try TemporaryDirectory("vt-hdr")
        let video = [UInt8](try Data(contentsOf: try await TestVideo.makePQ(in: directory)))
        // VideoCoderTests checks the library's rendering against colour-science's.
        let library = TestVideo.color(of: try CodersManager.shared.decode(Data(video)))
        #expect(library[0] >= 240, "\(library): the code values shown as sRGB would be 200")
        var keeping = DecodeOptions()
        keeping.keepsHighBitDepth = true
        try await Self.serving(video) { harness throws in
            let sdr = try await harness.get(harness.signedPlain("w:0", "/clip.mp4", extension: "png"))
            #expect(sdr.status == 200, "\(sdr.text)")
            #expect(try !CodersManager.shared.decode(sdr.body, options: keeping).pixels.isHighBitDepth)
            let middle = try Self.middle(sdr.body)
            #expect(TestVideo.matches(middle, library, tolerance: 1), "\(middle) against \(library)")
            let hdr = try await harness.get(harness.signedPlain("ph:1/w:0", "/clip.mp4", extension: "png"))
            #expect(hdr.status == 200, "\(hdr.text)")
            let kept = try CodersManager.shared.decode(hdr.body, options: keeping)
            #expect(kept.pixels.isHighBitDepth && kept.sourceColor?.transfer == ColorDescription.perceptualQuantizer)
            #expect(TestVideo.matches(try Self.middle(hdr.body), library, tolerance: 2))
            let jpeg = try await harness.get(harness.signedPlain("ph:1/w:0", "/clip.mp4", extension: "jpg"))
            #expect(TestVideo.matches(try Self.middle(jpeg.body), library, tolerance: 3))
        }
    }

    @Test("IMGPROXY_VIDEO_THUMBNAIL_SECOND and _KEYFRAMES set the defaults vts and vtk replace")
    func defaultsFromTheConfiguration() async throws {
        let directory = try TemporaryDirectory("vt-defaults")
        let video = [UInt8](try Data(contentsOf: try await TestVideo.make("clip", in: directory, keyframeInterval: 20)))
        var configuration = Self.enabled()
        configuration.videoThumbnails.second = 1.5
        try await Self.serving(video, configuration) { harness throws in
            let answer = try await harness.get(harness.signedPlain("w:0", "/clip.mp4", extension: "png"))
            #expect(TestVideo.matches(try Self.middle(answer.body), TestVideo.colors[1]))
            let first = try await harness.get(harness.signedPlain("vts:0", "/clip.mp4", extension: "png"))
            #expect(TestVideo.matches(try Self.middle(first.body), TestVideo.colors[0]))
        }
        configuration.videoThumbnails.keyframesOnly = true
        try await Self.serving(video, configuration) { harness throws in
            let keyframe = try await harness.get(harness.signedPlain("w:0", "/clip.mp4", extension: "png"))
            #expect(TestVideo.matches(try Self.middle(keyframe.body), TestVideo.colors[0]))
            let exact = try await harness.get(harness.signedPlain("vtk:0", "/clip.mp4", extension: "png"))
            #expect(TestVideo.matches(try Self.middle(exact.body), TestVideo.colors[1]))
        }
    }

    /// The colour at the middle of each `width` x `height` tile of a row.
    static func tiles(_ image: Image, width: Int, height: Int, row: Int = 0) -> [[Int]] {
        (0..<image.pixelWidth / width).map { column in
            TestVideo.color(of: image, x: column * width + width / 2, y: row * height + height / 2)
        }
    }

    @Test("vtt: a tile sheet of frames a step apart (negative: spread over the video), fitted, filled or extended, trimmed")
    func tileSheets() async throws {
        let directory = try TemporaryDirectory("vt-tiles")
        let video = [UInt8](try Data(contentsOf: try await TestVideo.make("clip", in: directory)))
        let (red, green, blue) = (TestVideo.colors[0], TestVideo.colors[1], TestVideo.colors[2])
        try await Self.serving(video) { harness throws in
            func sheet(_ options: String) async throws -> Image {
                let answer = try await harness.get(harness.signedPlain(options, "/clip.mp4", extension: "png"))
                #expect(answer.status == 200, "\(options): \(answer.text)")
                return try CodersManager.shared.decode(answer.body)
            }
            func expect(_ image: Image, _ size: (Int, Int), tiles colors: [[Int]], tile: (Int, Int), row: Int = 0) {
                #expect(image.pixelWidth == size.0 && image.pixelHeight == size.1, "\(image.pixelWidth)x\(image.pixelHeight)")
                let found = Self.tiles(image, width: tile.0, height: tile.1, row: row)
                #expect(found.count == colors.count && zip(found, colors).allSatisfy { TestVideo.matches($0, $1) }, "\(found)")
            }
            // At 0, 1 and 2 s: the red, green and blue seconds; 64x48 frames fitted to 32x24.
            expect(try await sheet("vtt:1:3:1:32:24"), (96, 24), tiles: [red, green, blue], tile: (32, 24))
            // A negative step: the 3 s spread over 4 tiles (0, 0.75, 1.5, 2.25 s), 2 by 2, 16 wide.
            let spread = try await sheet("vtt:-1:2:2:16:0")
            expect(spread, (32, 24), tiles: [red, red], tile: (16, 12))
            expect(spread, (32, 24), tiles: [green, blue], tile: (16, 12), row: 1)
            // 8 tiles asked of a 3 s video a second apart: 3 frames; trimmed to them, or kept black.
            expect(try await sheet("vtt:1:4:2:32:24:0:1"), (96, 24), tiles: [red, green, blue], tile: (32, 24))
            expect(try await sheet("vtt:1:4:2:32:24"), (128, 48), tiles: [red, green, blue, [0, 0, 0]], tile: (32, 24))
            // Filled to 30x30 squares; extended to them instead, the fitted 30x23 frame centred on black.
            expect(try await sheet("vtt:1:3:1:30:30:0:0:1"), (90, 30), tiles: [red, green, blue], tile: (30, 30))
            let extended = try await sheet("vtt:1:3:1:30:30:1")
            #expect(extended.pixelWidth == 90 && extended.pixelHeight == 30)
            let corner = extended.pixels.pixel(x: 15, y: 1)
            #expect(corner.red < 10 && corner.green < 10 && corner.blue < 10, "\(corner)")
            for bad in ["vtt:1:0:1", "vtt:x:1:1", "vtt:1:401:1", "vta:1:100:1000"] {
                let refused = try await harness.get(harness.signedPlain(bad, "/clip.mp4"))
                #expect(refused.status == 400, "\(bad): \(refused.status)")
            }
        }
    }

    @Test("vta: an animated preview of frames a step apart, each lasting the delay; past the end it holds on the last frame, or is trimmed")
    func animations() async throws {
        let directory = try TemporaryDirectory("vt-animation")
        let video = [UInt8](try Data(contentsOf: try await TestVideo.make("clip", in: directory)))
        try await Self.serving(video) { harness throws in
            let answer = try await harness.get(harness.signedPlain("vta:1:200:3:32:24", "/clip.mp4"))
            #expect(answer.status == 200, "\(answer.text)")
            // No format asked: the first preferred format that animates, GIF.
            #expect(answer.header("Content-Type") == "image/gif")
            let animation = try CodersManager.shared.decode(answer.body)
            #expect(animation.frames.count == 3 && animation.pixelWidth == 32 && animation.pixelHeight == 24)
            #expect(animation.frames.allSatisfy { $0.duration == .milliseconds(200) })
            for index in 0..<3 {
                #expect(TestVideo.matches(TestVideo.color(of: animation, frame: index), TestVideo.colors[index], tolerance: 24))
            }
            // WebP's encoder merges equal frames into a longer one: the length is what to compare.
            func length(_ options: String) async throws -> Duration {
                let answer = try await harness.get(harness.signedPlain(options, "/clip.mp4", extension: "webp"))
                return try CodersManager.shared.decode(answer.body).frames.reduce(.zero) { $0 + $1.duration }
            }
            #expect(try await length("vta:1:100:5:32:24") == .milliseconds(500))
            #expect(try await length("vta:1:100:5:32:24:0:1") == .milliseconds(300))
        }
    }

    @Test("a damaged video or another codec is a 422 with its reason, never a 500")
    func damaged() async throws {
        let directory = try TemporaryDirectory("vt-damaged")
        let video = try Data(contentsOf: try await TestVideo.make("clip", in: directory))
        let mpeg4 = [UInt8](try Data(contentsOf: try await TestVideo.make("old", in: directory, codec: .mpeg4, seconds: 1)))
        try await ServerHarness.inProcess(Self.enabled()) { harness throws in
            harness.origin.route("/cut.mp4", .ok([UInt8](video.prefix(video.count / 3)), contentType: "video/mp4"))
            harness.origin.route("/old.mp4", .ok(mpeg4, contentType: "video/mp4"))
            let cut = try await harness.get(harness.signedPlain("vts:2.5", "/cut.mp4"))
            #expect(cut.status == 422, "\(cut.status) \(cut.text)")
            let old = try await harness.get(harness.signedPlain("w:10", "/old.mp4"))
            #expect(old.status == 422 || old.status == 415, "\(old.status) \(old.text)")
            #expect(old.text.contains("mpeg4"), "\(old.text)")
        }
    }
    #else
    @Test("a build without the Video trait refuses to enable video thumbnails, naming the trait")
    func enablingNeedsTheTrait() throws {
        #expect(throws: WebImageError(.invalidArgument)) { try Self.enabled().validate() }
    }
    #endif
}
