import Foundation
import Testing
import WebImage
import WebImageTesting
import WebImageTestSupport

/// The built `webimage` binary, run as a user would, against the origin server.
@Suite("webimage command")
struct WebImageCommandTests {
    typealias Run = CommandRun
    typealias Workspace = CommandWorkspace

    private func withOrigin(_ body: (OriginServer, Workspace) async throws -> Void) async throws {
        let origin = try await OriginServer.start()
        let workspace = try Workspace()
        for (name, type) in [
            ("gradient-rgba.png", "image/png"), ("gradient.jpg", "image/jpeg"), ("animated.gif", "image/gif"),
            ("oriented-right.jpg", "image/jpeg"),
        ] {
            origin.route("/" + name, .ok([UInt8](try Fixture.data(name)), contentType: type))
        }
        origin.route("/missing.png", .status(404))
        do {
            try await body(origin, workspace)
        } catch {
            try? await origin.shutdown()
            throw error
        }
        try await origin.shutdown()
    }

    @Test("fetch writes the original bytes, then finds them on disk; --no-cache goes to the network")
    func fetchOne() async throws {
        try await withOrigin { origin, workspace in
            let url = origin.url("/gradient-rgba.png").absoluteString
            let first = try await workspace.run(["fetch", url, "-o", workspace.path("a.png"), "--json"])
            #expect(first.status == 0, "\(first.standardError)")
            let report = try #require(first.jsonLines().first)
            #expect(report["source"] as? String == "network" && report["format"] as? String == "png")
            #expect(report["width"] as? Int == 64 && report["height"] as? Int == 48 && report["frames"] as? Int == 1)
            #expect(report["bytes"] as? Int == (try Fixture.data("gradient-rgba.png")).count && report["milliseconds"] is Double)
            #expect(FileManager.default.contents(atPath: workspace.path("a.png")) == (try Fixture.data("gradient-rgba.png")))

            let second = try await workspace.run(["fetch", url])
            #expect(second.status == 0 && second.lines.count == 1)
            #expect(second.lines[0].contains(" disk ") && second.lines[0].contains("64x48"))
            let uncached = try await workspace.run(["fetch", url, "--no-cache", "--json"])
            #expect(uncached.jsonLines().first?["source"] as? String == "network")
            #expect(origin.requestCount("/gradient-rgba.png") == 2)
        }
    }

    @Test("fetch of several URLs writes a directory in the asked format; a failure exits 1 and the rest still land")
    func fetchSeveral() async throws {
        try await withOrigin { origin, workspace in
            let run = try await workspace.run([
                "fetch", origin.url("/gradient.jpg").absoluteString, origin.url("/missing.png").absoluteString,
                origin.url("/animated.gif").absoluteString, "-o", workspace.path("out"), "--format", "webp", "--json",
            ])
            #expect(run.status == 1)
            #expect(run.standardError.contains("missing.png") && run.standardError.contains("404"))
            let reports = run.jsonLines()
            #expect(reports.count == 3 && reports[1]["error"] is String)
            for name in ["gradient.webp", "animated.webp"] {
                let data = try #require(FileManager.default.contents(atPath: workspace.path("out/" + name)), "\(name) was not written")
                #expect(ImageFormat(sniffing: data) == .webP)
            }
            let animated = try CodersManager.shared.decode(
                try #require(FileManager.default.contents(atPath: workspace.path("out/animated.webp"))))
            #expect(animated.frames.count == 3, "WebP keeps the animation")
        }
    }

    @Test("fetch applies a thumbnail and a transform; options parse; usage errors exit 2")
    func fetchShapingAndUsage() async throws {
        try await withOrigin { origin, workspace in
            let url = origin.url("/gradient.jpg").absoluteString
            let shaped = try await workspace.run([
                "fetch", url, "--thumbnail", "32x32", "--transform", "round:4", "-o", workspace.path("t.png"),
            ])
            #expect(shaped.status == 0, "\(shaped.standardError)")
            let image = try CodersManager.shared.decode(try #require(FileManager.default.contents(atPath: workspace.path("t.png"))))
            #expect(image.pixelWidth == 32 && image.pixelHeight == 24 && image.pixels.pixel(x: 0, y: 0).alpha == 0)

            let cacheOnly = try await workspace.run(["fetch", origin.url("/animated.gif").absoluteString, "--options", "from-cache-only"])
            #expect(cacheOnly.status == 1 && cacheOnly.standardError.contains("cacheMiss"))
            for arguments in [
                ["fetch"], ["fetch", url, "--options", "sideways"], ["fetch", url, "--format", "bmp"],
                ["fetch", url, "--transform", "resize:0x1"], ["fetch", url, "--thumbnail", "big"], ["nonsense"],
            ] {
                let usage = try await workspace.run(arguments)
                #expect(usage.status == 2, "\(arguments): \(usage.status)")
                #expect(!usage.standardError.isEmpty)
            }
        }
    }

    @Test("prefetch warms the cache, reports JSON, prints plain progress lines off a terminal, and a rerun skips")
    func prefetch() async throws {
        try await withOrigin { origin, workspace in
            for index in 0..<5 {
                origin.route(
                    "/p\(index).png",
                    OriginResponse(
                        headers: [("Content-Type", "image/png")], body: [UInt8](try Fixture.data("gradient-rgba.png")),
                        headerDelay: .milliseconds(60)))
            }
            let list =
                "# warm these\n\n" + (0..<5).map { origin.url("/p\($0).png").absoluteString }.joined(separator: "\n") + "\n"
                + origin.url("/missing.png").absoluteString + "\n"
            try list.write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
            let first = try await workspace.run([
                "prefetch", "-i", workspace.path("urls.txt"), "-j", "1", "--json", "--progress-interval", "0.05",
            ])
            #expect(first.status == 1, "a failure exits 1")
            let summary = first.json
            #expect(
                summary["total"] as? Int == 6 && summary["succeeded"] as? Int == 5 && summary["failed"] as? Int == 1
                    && summary["skipped"] as? Int == 0)
            #expect((summary["bytes"] as? Int ?? 0) > 0 && summary["seconds"] is Double && summary["imagesPerSecond"] is Double)
            #expect(first.standardError.contains("progress: "), "plain progress lines when stderr is not a terminal")
            #expect(!first.standardError.contains("\u{1B}["))

            let again = try await workspace.run([
                "prefetch", "-i", workspace.path("urls.txt"), "--allow-failures", "-o", workspace.path("saved"),
            ])
            #expect(again.status == 0)
            #expect(
                again.lines.last?.hasPrefix("6 URLs: 5 loaded, 0 skipped, 1 failed") == true, "the files were not saved yet: \(again.lines)"
            )
            let skipping = try await workspace.run([
                "prefetch", "-i", workspace.path("urls.txt"), "--allow-failures", "-o", workspace.path("saved"), "--json",
            ])
            #expect(skipping.json["skipped"] as? Int == 5)
            #expect(FileManager.default.fileExists(atPath: workspace.path("saved/p3.png")))
        }
    }

    @Test("prefetch checks each image by its header: bytes that are no image fail and leave nothing in the cache")
    func prefetchChecksHeaders() async throws {
        try await withOrigin { origin, workspace in
            origin.route("/page.png", .ok(Array("<html><body>not found</body></html>".utf8), contentType: "image/png"))
            let list = ["/gradient.jpg", "/page.png"].map { origin.url($0).absoluteString }.joined(separator: "\n")
            try list.write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
            let run = try await workspace.run(["prefetch", "-i", workspace.path("urls.txt"), "--json"])
            #expect(run.status == 1 && run.json["succeeded"] as? Int == 1 && run.json["failed"] as? Int == 1, "\(run.standardError)")
            #expect(run.standardError.contains("page.png"))
            let listed = try await workspace.run(["cache", "ls", "--json"])
            let entries = try #require((try JSONSerialization.jsonObject(with: Data(listed.lines.joined().utf8))) as? [[String: Any]])
            #expect(entries.compactMap { $0["key"] as? String } == [origin.url("/gradient.jpg").absoluteString])
        }
    }

    @Test("prefetch draws a progress bar on a terminal")
    func prefetchBar() async throws {
        try await withOrigin { origin, workspace in
            for index in 0..<4 {
                origin.route(
                    "/b\(index).png",
                    OriginResponse(
                        headers: [("Content-Type", "image/png")], body: [UInt8](try Fixture.data("gradient-rgba.png")),
                        headerDelay: .milliseconds(150)))
            }
            try (0..<4).map { origin.url("/b\($0).png").absoluteString }.joined(separator: "\n").write(
                toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
            let command = [ChildProcess.builtProduct("webimage").path, "prefetch", "-i", workspace.path("urls.txt"), "-j", "1"].joined(
                separator: " ")
            let run = try await workspace.run(["-q", "-e", "-c", command, "/dev/null"], viaScript: true)
            #expect(run.status == 0)
            let output = run.lines.joined(separator: "\n")
            #expect(output.contains("\u{1B}[2K[#") && output.contains("img/s") && output.contains("ETA"), "\(output)")
            #expect(output.contains("4 URLs: 4 loaded"))
        }
    }

    @Test("convert turns images upright, keeps orientation on request, takes the first frame for stills, and fails clearly")
    func convert() async throws {
        let workspace = try Workspace()
        let oriented = Fixture.url("oriented-right.jpg").path
        let upright = try await workspace.run(["convert", oriented, workspace.path("up.png")])
        #expect(upright.status == 0, "\(upright.standardError)")
        let image = try CodersManager.shared.decode(try #require(FileManager.default.contents(atPath: workspace.path("up.png"))))
        #expect(image.pixelWidth == 48 && image.pixelHeight == 64)
        let kept = try await workspace.run([
            "convert", oriented, workspace.path("kept.jpg"), "--keep-orientation", "--quality", "50", "--json",
        ])
        #expect(kept.json["width"] as? Int == 64 && kept.json["height"] as? Int == 48)
        let keptImage = try CodersManager.shared.decode(try #require(FileManager.default.contents(atPath: workspace.path("kept.jpg"))))
        #expect(keptImage.orientation == .right, "the JPEG written with --keep-orientation says how to turn it")
        let profiled = try await workspace.run([
            "convert", Fixture.url("color/p3.jpg").path, workspace.path("p3.png"), "--keep-color-profile", "--keep-exif",
        ])
        #expect(profiled.status == 0)
        let p3 = try CodersManager.shared.decode(
            try #require(FileManager.default.contents(atPath: workspace.path("p3.png"))), options: DecodeOptions(keepsColorProfile: true))
        #expect(p3.colorProfile == (try Fixture.data("color/display-p3.icc")))
        // A 16-bit PNG (written by the library's encoder) stays 16-bit with --keep-bit-depth, and
        // is 8-bit without; as JPEG it is 8-bit either way.
        let samples = (0..<(20 * 10 * 4)).map { UInt16(truncatingIfNeeded: $0 &* 40503) | ($0 % 4 == 3 ? 0xFFFF : 0) }
        try CodersManager.shared.encode(Image(pixels: PixelBuffer(width: 20, height: 10, straightRGBA16: samples)), as: .png).write(
            to: URL(fileURLWithPath: workspace.path("deep.png")))
        for (flags, target, depth) in [
            (["--keep-bit-depth"], "deep-out.png", 16), ([], "flat-out.png", 8), (["--keep-bit-depth"], "deep.jpg", 8),
        ] {
            let converted = try await workspace.run(
                ["convert", workspace.path("deep.png"), workspace.path(target), "--thumbnail", "10x5"] + flags)
            #expect(converted.status == 0, "\(converted.standardError)")
            let written = try #require(FileManager.default.contents(atPath: workspace.path(target)))
            #expect(try CodersManager.shared.decode(written).sourceColor?.bitDepth == depth, "\(target) \(flags)")
        }
        // An Ultra HDR JPEG's gain map values (UltraHDRFile: libultrahdr's gain map XMP).
        let base = try CodersManager.shared.encode(
            Image(pixels: PixelBuffer(width: 8, height: 8, straightRGBA: [UInt8](repeating: 90, count: 256))), as: .jpeg)
        try UltraHDRFile.make(base).write(to: URL(fileURLWithPath: workspace.path("ultra.jpg")))
        let ultra = try await workspace.run(["info", workspace.path("ultra.jpg"), "--json"])
        let gainMap = try #require((ultra.json["color"] as? [String: Any])?["gainMapMetadata"] as? [String: Any])
        #expect(gainMap["gainMapMax"] as? [Double] == [2.32193] && gainMap["hdrCapacityMax"] as? Double == 2.32193)
        #expect(gainMap["offsetSDR"] as? [Double] == [0] && gainMap["baseRenditionIsHDR"] as? Bool == false)
        let ultraText = try await workspace.run(["info", workspace.path("ultra.jpg")])
        #expect(
            ultraText.lines.contains(
                "colour:      8-bit, a gain map (shown as its SDR base; log2 content boost up to 2.32193, HDR capacity 2.32193)"),
            "\(ultraText.lines)")
        // An iPhone JPEG's Apple gain map (libavif's test file; GainMapAppleTests): headroom 3 stops.
        let apple = try await workspace.run(["info", Fixture.url("gain-map/libavif/apple_gainmap_old.jpg").path, "--json"])
        let appleGainMap = try #require((apple.json["color"] as? [String: Any])?["gainMapMetadata"] as? [String: Any])
        #expect(appleGainMap["gainMapMax"] as? [Double] == [3] && appleGainMap["hdrCapacityMax"] as? Double == 3)
        let avif = try await workspace.run(["convert", Fixture.url("bmp/mixed.ico").path, workspace.path("icon.avif"), "--json"])
        #expect(avif.status == 0 && avif.json["format"] as? String == "avif" && avif.json["width"] as? Int == 32)
        let info = try await workspace.run(["info", Fixture.url("avif/animated.avif").path, "--json"])
        #expect(info.json["format"] as? String == "avif" && info.json["frames"] as? Int == 3)
        let hdr = try await workspace.run(["info", Fixture.url("avif/pq-12-bit.avif").path, "--json"])
        let color = try #require(hdr.json["color"] as? [String: Any])
        #expect(color["bitDepth"] as? Int == 12 && color["primaries"] as? String == "bt2020" && color["transfer"] as? String == "pq")
        #expect(color["hdr"] as? Bool == true && color["gainMap"] as? Bool == false && color["matrix"] as? Int == 0)
        let hdrText = try await workspace.run(["info", Fixture.url("avif/pq-12-bit.avif").path])
        #expect(hdrText.lines.contains("colour:      12-bit, bt2020 primaries, pq transfer (HDR, tone-mapped to SDR)"), "\(hdrText.lines)")
        let jxl = try await workspace.run(["convert", Fixture.url("svg/gradient.svg").path, workspace.path("drawn.jxl"), "--json"])
        #expect(jxl.status == 0 && jxl.json["format"] as? String == "jxl" && jxl.json["width"] as? Int == 48)
        let jxlInfo = try await workspace.run(["info", Fixture.url("jxl/animated.jxl").path, "--json"])
        #expect(jxlInfo.json["format"] as? String == "jxl" && jxlInfo.json["frames"] as? Int == 3)
        let heicInfo = try await workspace.run(["info", Fixture.url("heif/photo.heic").path, "--json"])
        #expect(heicInfo.json["format"] as? String == "heic" && heicInfo.json["width"] as? Int == 48)
        let poster = try await workspace.run(["convert", Fixture.url("animated.gif").path, workspace.path("poster.png")])
        #expect(poster.status == 0)
        #expect(
            try CodersManager.shared.decode(try #require(FileManager.default.contents(atPath: workspace.path("poster.png")))).frames.count
                == 1)
        try Data("not an image at all".utf8).write(to: URL(fileURLWithPath: workspace.path("bad.png")))
        let bad = try await workspace.run(["convert", workspace.path("bad.png"), workspace.path("out.png")])
        #expect(bad.status == 1 && bad.standardError.contains("cannot decode") && bad.standardError.contains("no image signature"))
        let unknown = try await workspace.run(["convert", oriented, workspace.path("out.xyz")])
        #expect(unknown.status == 2)
    }

    @Test("convert and info read a video: the frame --second takes (--keyframes: the keyframe before it), its size and colour")
    func videos() async throws {
        let workspace = try Workspace()
        let directory = try TemporaryDirectory("command-video")
        let clip = try await TestVideo.make("clip", in: directory, keyframeInterval: 20).path
        #if Video
        func middle(_ name: String) throws -> [Int] {
            TestVideo.color(of: try CodersManager.shared.decode(try #require(FileManager.default.contents(atPath: workspace.path(name)))))
        }
        #expect(try await workspace.run(["convert", clip, workspace.path("first.png")]).status == 0)
        #expect(TestVideo.matches(try middle("first.png"), TestVideo.colors[0]))
        #expect(try await workspace.run(["convert", clip, workspace.path("later.png"), "--second", "1.5"]).status == 0)
        #expect(TestVideo.matches(try middle("later.png"), TestVideo.colors[1]))
        #expect(try await workspace.run(["convert", clip, workspace.path("key.png"), "--second", "1.5", "--keyframes"]).status == 0)
        #expect(TestVideo.matches(try middle("key.png"), TestVideo.colors[0]))
        let info = try await workspace.run(["info", clip, "--json"])
        #expect(info.json["format"] as? String == "mp4" && info.json["width"] as? Int == 64 && info.json["height"] as? Int == 48)
        #expect((info.json["color"] as? [String: Any])?["bitDepth"] as? Int == 8)
        #else
        let refused = try await workspace.run(["convert", clip, workspace.path("first.png")])
        #expect(refused.status == 1 && refused.standardError.contains("no coder decodes mp4"), "\(refused.standardError)")
        #endif
        let negative = try await workspace.run(["convert", clip, workspace.path("x.png"), "--second", "-1"])
        #expect(negative.status == 2)
    }

    #if Video
    @Test("an HDR video: info reports PQ and the light level it states; convert tone-maps it, or keeps 16 bits with --keep-bit-depth")
    func hdrVideo() async throws {
        let workspace = try Workspace()
        let directory = try TemporaryDirectory("command-hdr-video")
        let clip = try await TestVideo.makePQ(in: directory, statedPeak: 1000).path
        let info = try await workspace.run(["info", clip, "--json"])
        let color = try #require(info.json["color"] as? [String: Any])
        #expect(color["bitDepth"] as? Int == 10 && color["transfer"] as? String == "pq" && color["hdr"] as? Bool == true)
        #expect(color["peakLuminance"] as? Int == 1000, "\(color)")
        let text = try await workspace.run(["info", clip])
        #expect(
            text.lines.contains("colour:      10-bit, bt2020 primaries, pq transfer, peak 1000 cd/m² (HDR, tone-mapped to SDR)"),
            "\(text.lines)")
        var keeping = DecodeOptions()
        keeping.keepsHighBitDepth = true
        #expect(try await workspace.run(["convert", clip, workspace.path("sdr.png")]).status == 0)
        #expect(try await workspace.run(["convert", clip, workspace.path("hdr.png"), "--keep-bit-depth"]).status == 0)
        let sdr = try CodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: workspace.path("sdr.png"))), options: keeping)
        let hdr = try CodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: workspace.path("hdr.png"))), options: keeping)
        #expect(!sdr.pixels.isHighBitDepth && hdr.pixels.isHighBitDepth)
        #expect(hdr.sourceColor?.transfer == ColorDescription.perceptualQuantizer)
        // Tone-mapped from the stated 1,000 cd/m²: the red code, 200/255 of PQ (about 1,400
        // cd/m²), is past the peak and lands on SDR white.
        #expect(TestVideo.color(of: sdr)[0] >= 250, "\(TestVideo.color(of: sdr))")
    }
    #endif

    @Test("info describes files and URLs")
    func info() async throws {
        try await withOrigin { origin, workspace in
            let file = try await workspace.run(["info", Fixture.url("oriented-right.jpg").path, "--json"])
            #expect(file.json["format"] as? String == "jpeg" && file.json["width"] as? Int == 64 && file.json["orientation"] as? Int == 6)
            let gif = try await workspace.run(["info", origin.url("/animated.gif").absoluteString, "--json"])
            #expect(gif.json["frames"] as? Int == 3 && (gif.json["durations"] as? [Double])?.count == 3 && gif.json["loopCount"] is Int)
            let text = try await workspace.run(["info", Fixture.url("animated.gif").path])
            #expect(text.lines.contains { $0.hasPrefix("frames:") && $0.hasSuffix("3") })
            let missing = try await workspace.run(["info", workspace.path("nothing.png")])
            #expect(missing.status == 1)
        }
    }

    @Test("cache stats, ls, rm, trim, clear and path, honouring WEBIMAGE_CACHE_DIR")
    func cache() async throws {
        try await withOrigin { origin, workspace in
            let url = origin.url("/gradient.jpg").absoluteString
            _ = try await workspace.run(["fetch", url])
            let stats = try await workspace.run(["cache", "stats", "--json"])
            #expect(stats.json["count"] as? Int == 1 && (stats.json["bytes"] as? Int ?? 0) > 0)
            #expect(stats.json["packedCount"] as? Int == 1, "a small JPEG is packed into a segment")
            #expect(
                stats.json["directory"] as? String == workspace.cacheDirectory.path && stats.json["sizeLimit"] is Int
                    && stats.json["countLimit"] is Int)
            let list = try await workspace.run(["cache", "ls", "--json"])
            let entries = try #require((try JSONSerialization.jsonObject(with: Data(list.lines.joined().utf8))) as? [[String: Any]])
            #expect(entries.count == 1 && entries[0]["key"] as? String == url && entries[0]["bytes"] is Int)
            #expect(entries[0]["created"] is String && entries[0]["lastAccess"] is String)
            #expect(try await workspace.run(["cache", "trim"]).status == 0)
            #expect(try await workspace.run(["cache", "rm", url]).status == 0)
            #expect(try await workspace.run(["cache", "rm", url]).status == 1)
            _ = try await workspace.run(["fetch", url])
            #expect(try await workspace.run(["cache", "clear"]).status == 0)
            #expect(try await workspace.run(["cache", "stats", "--json"]).json["count"] as? Int == 0)
            #expect(try await workspace.run(["cache", "path"]).lines == [workspace.cacheDirectory.path])
            let elsewhere = workspace.path("other")
            #expect(try await workspace.run(["cache", "path", "--cache-dir", elsewhere]).lines == [elsewhere])
        }
    }

    @Test("every subcommand has --help with examples")
    func help() async throws {
        let workspace = try Workspace()
        for subcommand in [["fetch"], ["prefetch"], ["convert"], ["info"], ["cache"], ["cache", "stats"], ["cache", "ls"], ["demo"]] {
            let run = try await workspace.run(subcommand + ["--help"])
            #expect(run.status == 0, "\(subcommand)")
            #expect(run.lines.contains { $0.contains("Example") }, "\(subcommand) --help shows examples")
        }
    }
}

extension CommandWorkspace {
    /// Runs `script` (util-linux), which gives the command a pseudo-terminal.
    func run(_ arguments: [String], viaScript: Bool) async throws -> CommandRun {
        var environment = ProcessInfo.processInfo.environment
        environment["WEBIMAGE_CACHE_DIR"] = cacheDirectory.path
        let child = try ChildProcess(URL(fileURLWithPath: "/usr/bin/script"), arguments, environment: environment)
        let exit = try await child.waitForExit()
        return CommandRun(status: exit.status, lines: child.lines, standardError: "")
    }
}
