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
    static func middle(_ body: Data) throws -> [Int] {
        let image = try CodersManager.shared.decode(body)
        let pixels = image.pixels
        let offset = (pixels.height / 2) * pixels.bytesPerRow + (pixels.width / 2) * 4
        return (0..<3).map { Int(pixels.bytes[offset + $0]) }
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
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/clip.mp4", .ok(video, contentType: "video/mp4"))
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
        try await ServerHarness.inProcess(Self.enabled()) { harness throws in
            harness.origin.route("/clip.mp4", .ok(video, contentType: "video/mp4"))
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

    @Test("IMGPROXY_VIDEO_THUMBNAIL_SECOND and _KEYFRAMES set the defaults vts and vtk replace")
    func defaultsFromTheConfiguration() async throws {
        let directory = try TemporaryDirectory("vt-defaults")
        let video = [UInt8](try Data(contentsOf: try await TestVideo.make("clip", in: directory, keyframeInterval: 20)))
        var configuration = Self.enabled()
        configuration.videoThumbnails.second = 1.5
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/clip.mp4", .ok(video, contentType: "video/mp4"))
            let answer = try await harness.get(harness.signedPlain("w:0", "/clip.mp4", extension: "png"))
            #expect(TestVideo.matches(try Self.middle(answer.body), TestVideo.colors[1]))
            let first = try await harness.get(harness.signedPlain("vts:0", "/clip.mp4", extension: "png"))
            #expect(TestVideo.matches(try Self.middle(first.body), TestVideo.colors[0]))
        }
        configuration.videoThumbnails.keyframesOnly = true
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/clip.mp4", .ok(video, contentType: "video/mp4"))
            let keyframe = try await harness.get(harness.signedPlain("w:0", "/clip.mp4", extension: "png"))
            #expect(TestVideo.matches(try Self.middle(keyframe.body), TestVideo.colors[0]))
            let exact = try await harness.get(harness.signedPlain("vtk:0", "/clip.mp4", extension: "png"))
            #expect(TestVideo.matches(try Self.middle(exact.body), TestVideo.colors[1]))
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
