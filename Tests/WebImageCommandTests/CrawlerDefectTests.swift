import Foundation
import Testing
import WebImage
import WebImageTesting
import WebImageTestSupport

/// The crawler defects of issue 38, each found by reading `prefetch` and checked here against the
/// built command and the origin server.
@Suite("prefetch: named files, shared caches, resumes", .serialized)
struct CrawlerDefectTests {
    private let png = [UInt8](try! Fixture.data("gradient-rgba.png"))
    private let jpeg = [UInt8](try! Fixture.data("gradient.jpg"))

    private func writeList(_ urls: [URL], to path: String) throws {
        try urls.map(\.absoluteString).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test(
        "named files: one stem per URL whatever their extensions, a '-N' suffix that is free, no folder from %2F, the extension of the bytes written; a rerun skips by the output alone"
    )
    func namedFiles() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        let routes: [(String, [UInt8], String)] = [
            ("/one/a-3.png", png, "image/png"), ("/two/a.png", png, "image/png"), ("/three/a.jpg", jpeg, "image/jpeg"),
            ("/four/a%2Fb.jpg", jpeg, "image/jpeg"), ("/five/noext", png, "image/png"), ("/six/..%2F..%2Fescape.jpg", jpeg, "image/jpeg"),
        ]
        for (path, body, type) in routes { origin.route(path, .ok(body, contentType: type)) }
        try writeList(routes.map { origin.url($0.0) }, to: workspace.path("urls.txt"))
        let out = workspace.path("out")
        let arguments = ["prefetch", "-i", workspace.path("urls.txt"), "-o", out, "--json"]
        let run = try await workspace.run(arguments)
        #expect(run.status == 0 && run.json["succeeded"] as? Int == 6, "\(run.standardError)")
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: out))
        // "a" is taken by /two, "a-3" (its place in the list) by /one: /three becomes a-3-2.
        #expect(names.isSuperset(of: ["a-3.png", "a.png", "a-3-2.jpg", "a_b.jpg", "noext.png"]), "\(names.sorted())")
        #expect(names.count == 6 && names.allSatisfy { !$0.contains("/") && !$0.hasPrefix(".") }, "\(names.sorted())")
        #expect(FileManager.default.contents(atPath: out + "/a-3-2.jpg") == Data(jpeg), "the original bytes, named by their format")
        #expect(!FileManager.default.fileExists(atPath: workspace.path("escape.jpg")))

        // The output decides: with the cache gone (evicted, or another machine), nothing is fetched again.
        try FileManager.default.removeItem(at: workspace.cacheDirectory)
        let again = try await workspace.run(arguments)
        #expect(again.json["skipped"] as? Int == 6, "\(again.standardError)")
        for (path, _, _) in routes { #expect(origin.requestCount(path) == 1, "\(path)") }

        let webp = try await workspace.run([
            "prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path("webp"), "--format", "webp", "--json",
        ])
        #expect(webp.status == 0, "\(webp.standardError)")
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: workspace.path("webp"))).isSuperset(of: [
                "a.webp", "a-3.webp", "a-3-2.webp",
            ]),
            "a.png and a.jpg no longer write the same a.webp")
        try await origin.shutdown()
    }

    @Test("two runs on one cache directory: the second reads it and stores nothing, with a warning, instead of failing every URL")
    func sharedCache() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        origin.route("/slow.jpg", OriginResponse(headers: [("Content-Type", "image/jpeg")], body: jpeg, headerDelay: .seconds(120)))
        for index in 0..<3 { origin.route("/q\(index).jpg", .ok(jpeg, contentType: "image/jpeg")) }
        try writeList([origin.url("/slow.jpg")], to: workspace.path("slow.txt"))
        try writeList((0..<3).map { origin.url("/q\($0).jpg") }, to: workspace.path("urls.txt"))
        var environment = ProcessInfo.processInfo.environment
        environment["WEBIMAGE_CACHE_DIR"] = workspace.cacheDirectory.path
        let first = try ChildProcess(
            ChildProcess.builtProduct("webimage"), ["prefetch", "-i", workspace.path("slow.txt")], environment: environment)
        _ = try await origin.waitForRequests(1, to: "/slow.jpg", timeout: .seconds(60))
        let second = try await workspace.run(["prefetch", "-i", workspace.path("urls.txt"), "--json"])
        #expect(second.status == 0 && second.json["succeeded"] as? Int == 3, "\(second.standardError)")
        #expect(second.standardError.contains("in use by another process"))
        first.kill()
        _ = try await first.waitForExit()
        try await origin.shutdown()
    }

    @Test("--transform reaches every frame of an animation instead of being skipped")
    func animatedTransform() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        origin.route("/anim.gif", .ok([UInt8](try Fixture.data("animated.gif")), contentType: "image/gif"))
        try writeList([origin.url("/anim.gif")], to: workspace.path("urls.txt"))
        let run = try await workspace.run([
            "prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path("out"), "--transform", "resize:20x10:fill", "--json",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let written = try CodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: workspace.path("out/anim.gif"))))
        #expect(written.frames.count > 1 && (written.pixelWidth, written.pixelHeight) == (20, 10))
        try await origin.shutdown()
    }

    @Test("--respect-cache-control: a stale cached image is revalidated (a 304 counts as skipped), a fresh one skipped without a request")
    func staleIsRevalidated() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        origin.route(
            "/stale.jpg",
            OriginResponse(headers: [("Content-Type", "image/jpeg"), ("Cache-Control", "max-age=0")], body: jpeg, etag: "\"v1\""))
        origin.route(
            "/fresh.jpg", OriginResponse(headers: [("Content-Type", "image/jpeg"), ("Cache-Control", "max-age=3600")], body: jpeg))
        try writeList([origin.url("/stale.jpg"), origin.url("/fresh.jpg")], to: workspace.path("urls.txt"))
        let arguments = ["prefetch", "-i", workspace.path("urls.txt"), "--respect-cache-control", "--json"]
        #expect(try await workspace.run(arguments).json["succeeded"] as? Int == 2)
        let again = try await workspace.run(arguments)
        #expect(again.status == 0 && again.json["skipped"] as? Int == 2, "a 304 downloads nothing: \(again.lines)")
        let revalidation = origin.requests(to: "/stale.jpg").last
        #expect(
            origin.requestCount("/stale.jpg") == 2 && revalidation?.headers.contains { $0.name.lowercased() == "if-none-match" } == true)
        #expect(origin.requestCount("/fresh.jpg") == 1)
        let plain = try await workspace.run(["prefetch", "-i", workspace.path("urls.txt"), "--json"])
        #expect(plain.json["skipped"] as? Int == 2, "without the flag the cache is used as it is")
        try await origin.shutdown()
    }

    @Test("--cache-size-limit and --cache-max-age set the disk cache's limits; bad values are usage errors")
    func cacheLimits() async throws {
        let workspace = try CommandWorkspace()
        for bad in [["--cache-size-limit=-1"], ["--cache-max-age=-2"]] {
            let run = try await workspace.run(["prefetch", "-i", workspace.path("none.txt")] + bad)
            #expect(run.status == 2 && run.standardError.contains("takes 0 or more"), "\(bad): \(run.standardError)")
        }
        let origin = try await OriginServer.start()
        // A JPEG with 400 KB after its end: an image by its header, and large.
        let big = jpeg + [UInt8](repeating: 0, count: 400_000)
        for index in 0..<4 { origin.route("/big\(index).jpg", .ok(big, contentType: "image/jpeg")) }
        try writeList((0..<4).map { origin.url("/big\($0).jpg") }, to: workspace.path("urls.txt"))
        let run = try await workspace.run(["prefetch", "-i", workspace.path("urls.txt"), "--cache-size-limit", "1", "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let stats = try await workspace.run(["cache", "stats", "--json"])
        let bytes = stats.json["bytes"] as? Int ?? .max
        #expect(big.count * 4 > 1 << 20 && bytes <= 1 << 20, "the 1 MiB limit holds: \(stats.lines)")
        try await origin.shutdown()
    }

    @Test("the Indexed Job recipe in docs/crawling.md passes --allow-failures: one dead link in a slice does not fail its pod")
    func jobRecipe() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/crawling.md"), encoding: .utf8)
        let job = try #require(doc.range(of: "kind: Job")).upperBound
        let recipe = doc[job...].prefix { $0 != "`" }
        #expect(recipe.contains("webimage prefetch") && recipe.contains("--allow-failures"))
    }

    @Test("a robots.txt crawl-delay above 30 s (a hostile 1e300 included) refuses its host's rows with the reason; no wait, no crash")
    func hostileCrawlDelay() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        origin.route("/robots.txt", .ok(Array("User-agent: *\nCrawl-delay: 1e300\n".utf8), contentType: "text/plain"))
        origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
        origin.route("/b.jpg", .ok(jpeg, contentType: "image/jpeg"))
        try writeList([origin.url("/a.jpg"), origin.url("/b.jpg")], to: workspace.path("urls.txt"))
        let run = try await workspace.run([
            "prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path("out"), "--output-format", "webdataset",
            "--respect-robots-txt", "--no-cache", "--allow-failures", "--json",
        ])
        #expect(run.status == 0 && run.json["failed"] as? Int == 2, "\(run.standardError)")
        let records = try DatasetTests.records(ofLines: workspace.path("out/00000.jsonl"))
        #expect(
            records.allSatisfy { $0["error_message"] as? String == "Disallowed by robots.txt: its crawl-delay of 1e+300 s is above 30 s" })
        #expect(origin.requestCount("/a.jpg") == 0 && origin.requestCount("/b.jpg") == 0)
        // The other durations a command takes as a number of seconds are bounded too.
        for bad in [["--timeout", "1e300"], ["--progress-interval", "1e300"]] {
            let refused = try await workspace.run(["prefetch", "-i", workspace.path("urls.txt")] + bad)
            #expect(refused.status == 2 && refused.standardError.contains("at most 3600"), "\(bad): \(refused.standardError)")
        }
        try await origin.shutdown()
    }

    @Test(
        "--respect-robots-txt: fetched once per host, disallowed rows refused with a reason, crawl-delay spaces the downloads; 404 allows, 5xx refuses"
    )
    func robotsTxt() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        let robots = "User-agent: MyBot\nDisallow: /private/\nCrawl-delay: 0.3\n\nUser-agent: *\nDisallow: /\n"
        origin.route("/robots.txt", .ok(Array(robots.utf8), contentType: "text/plain"))
        let paths = ["/private/a.jpg", "/public/b.jpg", "/public/c.jpg", "/public/d.jpg"]
        for path in paths { origin.route(path, .ok(jpeg, contentType: "image/jpeg")) }
        try writeList(paths.map { origin.url($0) }, to: workspace.path("urls.txt"))
        let start = ContinuousClock.now
        let run = try await workspace.run([
            "prefetch", "-i", workspace.path("urls.txt"), "-o", workspace.path("out"), "--output-format", "webdataset",
            "--respect-robots-txt",
            "--user-agent-token", "MyBot", "--no-cache", "--allow-failures", "-j", "8", "--json",
        ])
        let elapsed = ContinuousClock.now - start
        #expect(run.status == 0 && run.json["succeeded"] as? Int == 3 && run.json["failed"] as? Int == 1, "\(run.standardError)")
        #expect(origin.requestCount("/robots.txt") == 1 && origin.requestCount("/private/a.jpg") == 0)
        let refused = try DatasetTests.records(ofLines: workspace.path("out/00000.jsonl")).first { $0["status"] as? String != "success" }
        #expect(refused?["error_message"] as? String == "Disallowed by robots.txt")
        // Three downloads from one host 0.3 s apart: the last starts at least 0.6 s after the first.
        #expect(elapsed >= .milliseconds(600), "\(elapsed)")

        // Without the token the * group refuses everything; a 404 allows all; a 5xx refuses all.
        let star = try await workspace.run([
            "prefetch", "-i", workspace.path("urls.txt"), "--respect-robots-txt", "--no-cache", "-o", workspace.path("star"),
            "--allow-failures", "--json",
        ])
        #expect(star.json["failed"] as? Int == 4, "\(star.standardError)")
        for (status, failed) in [(404, 0), (503, 4)] {
            origin.route("/robots.txt", .status(status))
            let other = try await workspace.run([
                "prefetch", "-i", workspace.path("urls.txt"), "--respect-robots-txt", "--no-cache", "-o", workspace.path("s\(status)"),
                "--allow-failures", "--retries", "0", "--json",
            ])
            #expect(other.json["failed"] as? Int == failed, "robots.txt \(status): \(other.standardError)")
        }
        try await origin.shutdown()
    }

    @Test(
        "a crawl under a soft limit of 96 open files raises it: 64 downloads at once hold three descriptors each through the resolving relay"
    )
    func raisesOpenFileLimit() async throws {
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        // Held for a moment before their heads, so that the 64 downloads are open at once.
        let urls = (0..<96).map { index in
            origin.route(
                "/\(index).jpg", OriginResponse(headers: [("Content-Type", "image/jpeg")], body: jpeg, headerDelay: .milliseconds(300)))
            return origin.url("/\(index).jpg")
        }
        try writeList(urls, to: workspace.path("urls.txt"))
        var environment = ProcessInfo.processInfo.environment
        environment["WEBIMAGE_CACHE_DIR"] = workspace.cacheDirectory.path
        let child = try ChildProcess(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", "ulimit -Sn 96 && exec \"$0\" \"$@\"", ChildProcess.builtProduct("webimage").path, "prefetch", "-i",
                workspace.path("urls.txt"), "-j", "64", "--no-cache", "-o", workspace.path("out"), "--json",
            ], environment: environment)
        let exit = try await child.waitForExit()
        #expect(exit.status == 0, "\(child.lines.suffix(3))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.path("out")).count == 96)
        try await origin.shutdown()
    }
}
