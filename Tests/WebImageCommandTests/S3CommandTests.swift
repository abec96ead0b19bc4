import Foundation
import Testing
import WebImage
import WebImageS3
import WebImageTesting
import WebImageTestSupport

/// `webimage fetch` and `webimage info` reading `s3://` URLs with the AWS settings of their
/// environment, against SeaweedFS on 127.0.0.1.
@Suite("webimage with s3:// URLs")
struct S3CommandTests {
    static func environment(_ server: S3TestServer, secret: String? = nil) -> [String: String] {
        [
            "AWS_ENDPOINT_URL_S3": server.endpoint.absoluteString, "AWS_ACCESS_KEY_ID": server.accessKeyID,
            "AWS_SECRET_ACCESS_KEY": secret ?? server.secretAccessKey, "AWS_PROFILE": "", "HOME": "/nonexistent",
        ]
    }

    @Test("fetch and info read an s3:// image; a missing key and refused credentials fail with the reason, exit 1")
    func fetchAndInfo() async throws {
        let server = try await S3TestServer.shared()
        let bucket = S3Seeding.bucket()
        _ = try await S3Seeding.seed(
            server, [(S3Location(bucket: bucket, key: "dir/a b.png"), try S3Seeding.png(width: 20, height: 10))])
        let workspace = try CommandWorkspace()
        let url = S3Location(bucket: bucket, key: "dir/a b.png").url.absoluteString
        let fetched = try await workspace.run(
            ["fetch", url, "-o", workspace.path("a.png"), "--json"], environment: Self.environment(server))
        #expect(fetched.status == 0, "\(fetched.standardError)")
        #expect(fetched.jsonLines().first?["width"] as? Int == 20)
        #expect(try ImageHeader(data: [UInt8](try #require(FileManager.default.contents(atPath: workspace.path("a.png"))))).width == 20)
        let info = try await workspace.run(["info", url, "--json"], environment: Self.environment(server))
        #expect(info.status == 0, "\(info.standardError)")
        #expect(info.json["width"] as? Int == 20 && info.json["height"] as? Int == 10, "\(info.lines)")
        let missing = try await workspace.run(["fetch", "s3://\(bucket)/none.png"], environment: Self.environment(server))
        #expect(missing.status == 1 && missing.standardError.contains("404"), "\(missing.standardError)")
        let refused = try await workspace.run(["fetch", url, "--no-cache"], environment: Self.environment(server, secret: "not-it-at-all"))
        #expect(refused.status == 1 && refused.standardError.contains("SignatureDoesNotMatch"), "\(refused.standardError)")
        #expect(!refused.standardError.contains("not-it-at-all"))
        let badProfile = try await workspace.run(
            ["fetch", url, "--no-cache"], environment: ["AWS_PROFILE": "nobody", "HOME": "/nonexistent"])
        #expect(badProfile.status == 1 && badProfile.standardError.contains("AWS_PROFILE"), "\(badProfile.standardError)")
    }

    @Test(
        "prefetch -i s3://BUCKET/KEY reads its list from the bucket (a gzipped CSV too), -i s3://BUCKET/PREFIX/ the prefix's lists; a missing list fails with the reason"
    )
    func listFromBucket() async throws {
        let server = try await S3TestServer.shared()
        let origin = try await OriginServer.start()
        let png = [UInt8](try S3Seeding.png(width: 6, height: 4))
        for index in 0..<3 { origin.route("/l\(index).png", .ok(png, contentType: "image/png")) }
        let bucket = S3Seeding.bucket()
        let lines = (0..<3).map { origin.url("/l\($0).png").absoluteString }
        let csv = "url,caption\n" + lines.map { "\($0),\"a, b\"" }.joined(separator: "\n") + "\n"
        // Compressed by the system's gzip, as a user's list would be.
        let workspace = try CommandWorkspace()
        try csv.write(toFile: workspace.path("captions.csv"), atomically: true, encoding: .utf8)
        let gzip = try ChildProcess(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "gzip -c '\(workspace.path("captions.csv"))' > '\(workspace.path("captions.csv.gz"))'"])
        #expect(try await gzip.waitForExit().status == 0)
        let compressed = try #require(FileManager.default.contents(atPath: workspace.path("captions.csv.gz")))
        _ = try await S3Seeding.seed(
            server,
            [
                (S3Location(bucket: bucket, key: "lists/urls.txt"), Data(lines.joined(separator: "\n").utf8)),
                (S3Location(bucket: bucket, key: "lists/captions.csv.gz"), compressed),
                // A prefix's own lists of the format (not its sub-prefixes, not other files), in name order.
                (S3Location(bucket: bucket, key: "parts/b.csv"), Data(csv.utf8)),
                (S3Location(bucket: bucket, key: "parts/a.csv.gz"), compressed),
                (S3Location(bucket: bucket, key: "parts/notes.md"), Data("x".utf8)),
                (S3Location(bucket: bucket, key: "parts/old/c.csv"), Data(csv.utf8)),
            ])
        let plain = try await workspace.run(
            ["prefetch", "-i", "s3://\(bucket)/lists/urls.txt", "-o", workspace.path("named"), "--json"],
            environment: Self.environment(server))
        #expect(plain.status == 0 && plain.json["succeeded"] as? Int == 3, "\(plain.standardError)")
        let dataset = try await workspace.run(
            [
                "prefetch", "-i", "s3://\(bucket)/lists/captions.csv.gz", "--input-format", "csv", "--caption-col", "caption",
                "--output-format", "files", "-o", workspace.path("dataset"), "--json",
            ], environment: Self.environment(server))
        #expect(dataset.status == 0, "\(dataset.standardError)")
        #expect(FileManager.default.contents(atPath: workspace.path("dataset/00000/000000001.txt")) == Data("a, b".utf8))
        let prefix = try await workspace.run(
            ["prefetch", "-i", "s3://\(bucket)/parts/", "--input-format", "csv", "--count-rows", "--json"],
            environment: Self.environment(server))
        #expect(prefix.status == 0 && prefix.json["rows"] as? Int == 6, "two lists of 3 rows: \(prefix.lines) \(prefix.standardError)")
        let none = try await workspace.run(
            ["prefetch", "-i", "s3://\(bucket)/parts/", "--input-format", "tsv", "--count-rows"], environment: Self.environment(server))
        #expect(none.status == 1 && none.standardError.contains("holds no .tsv list"), "\(none.standardError)")
        let missing = try await workspace.run(["prefetch", "-i", "s3://\(bucket)/lists/none.txt"], environment: Self.environment(server))
        #expect(missing.status == 1 && missing.standardError.contains("cannot read the list") && missing.standardError.contains("404"))
        try await origin.shutdown()
    }
}
