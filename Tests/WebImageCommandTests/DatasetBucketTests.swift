import Foundation
import Testing
import WebImage
import WebImageCore
import WebImageS3
import WebImageTesting

@testable import WebImageDataset
import WebImageTestSupport

/// `prefetch -o s3://BUCKET/PREFIX`: img2dataset's shards written to a bucket (SeaweedFS on
/// 127.0.0.1), a tar shard as one multipart upload completed only when the shard is whole.
@Suite("prefetch -o s3:// (dataset shards in a bucket)")
struct DatasetBucketTests {
    static func client(_ server: S3TestServer) -> S3Client {
        S3Client(
            configuration: S3Configuration(
                endpoint: server.endpoint, usesPathStyle: true,
                credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: server.secretAccessKey)))
    }

    /// A fresh bucket, made by putting an object into it (SeaweedFS makes the bucket then).
    static func bucket(_ client: S3Client) async throws -> String {
        let bucket = S3Seeding.bucket()
        try await client.putObject(S3Location(bucket: bucket, key: "elsewhere/marker"), data: Data())
        return bucket
    }

    static func sample(_ position: Int, key: String, image: Data?) -> DatasetWriter.Sample {
        DatasetWriter.Sample(
            position: position, status: image == nil ? .failedToDownload : .success, error: image == nil ? "HTTP 404" : nil,
            image: image, caption: "caption \(position)",
            record: .object([
                .init(name: "key", value: .string(key)), .init(name: "status", value: .string(image == nil ? "failed" : "ok")),
            ]))
    }

    /// Adds the rows at `positions` all at once, as the run's concurrent downloads do.
    static func addAtOnce(_ positions: Range<Int>, images: [Data?], to writer: DatasetWriter) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for position in positions {
                group.addTask {
                    try await writer.add(Self.sample(position, key: writer.key(forPosition: position), image: images[position]))
                }
            }
            try await group.waitForAll()
        }
    }

    /// Bytes that do not compress, so that the parts are the sizes they say.
    static func noise(_ count: Int, seed: UInt64) -> Data {
        var state = seed | 1
        return Data(
            (0..<count).map { _ in
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                return UInt8(truncatingIfNeeded: state)
            })
    }

    static func withClient(_ body: (S3TestServer, S3Client) async throws -> Void) async throws {
        let server = try await S3TestServer.shared()
        let client = client(server)
        do {
            try await body(server, client)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    @Test(
        "a tar shard is one multipart upload: parts go out as it grows, rows added at once keep whole members, the object appears only complete, a stale upload of a killed run is aborted"
    )
    func tarShardInParts() async throws {
        try await Self.withClient { _, client in
            let bucket = try await Self.bucket(client)
            let archive = S3Location(bucket: bucket, key: "sets/one/00000.tar")
            // What a killed run leaves: an upload open under the shard's name.
            let stale = try await client.createMultipartUpload(archive)
            // S3's least part size, so that the 12 rows of ~1 MiB make parts as they would on AWS.
            let destination = try BucketDestination(url: URL(string: "s3://\(bucket)/sets/one")!, client: client, partSize: 5 << 20)
            let writer = try await DatasetWriter.open(destination, layout: .webdataset, shardSize: 12, slice: ListSlice(index: 0, count: 1))
            let images = (0..<12).map { Self.noise(1_000_000 + $0 * 777, seed: UInt64($0 + 1)) }
            try await Self.addAtOnce(0..<11, images: images, to: writer)
            let pending = try await client.multipartUploads(bucket: bucket, prefix: "sets/one/")
            #expect(pending.map(\.key) == [archive.key] && pending.first?.uploadID != stale, "the stale upload aborted, one open")
            let before = await #expect(throws: WebImageError.self) { try await client.headObject(archive) }
            #expect(before?.code == .badStatus(404), "no object before the shard is whole")
            try await writer.add(Self.sample(11, key: writer.key(forPosition: 11), image: images[11]))
            try await writer.finish(total: 12)

            #expect(try await client.multipartUploads(bucket: bucket, prefix: "sets/").isEmpty)
            let tar = try await client.getObject(archive)
            #expect(tar.info.contentType == "application/x-tar")
            // A multipart object's ETag ends with its count of parts: ~12 MB in parts of 5 MiB.
            #expect(tar.info.etag?.hasSuffix("-3\"") == true, "\(tar.info.etag ?? "no ETag")")
            let members = try DatasetTests.members(ofTar: tar.data)
            #expect(members.count == 36, "KEY.jpg, KEY.txt, KEY.json for each of 12 rows")
            for position in 0..<12 {
                let key = writer.key(forPosition: position)
                #expect(members.first { $0.name == key + ".jpg" }?.data == images[position], "\(key).jpg whole")
                #expect(members.first { $0.name == key + ".txt" }?.data == Data("caption \(position)".utf8))
            }
            let lines = String(
                decoding: try await client.getObject(S3Location(bucket: bucket, key: "sets/one/00000.jsonl")).data, as: UTF8.self)
            #expect(lines.split(separator: "\n").count == 12)
            let stats = try DatasetTests.json(try await client.getObject(S3Location(bucket: bucket, key: "sets/one/00000_stats.json")).data)
            #expect(stats["count"] as? Int == 12 && stats["successes"] as? Int == 12)
            #expect(try await destination.finishedShards() == [0])
        }
    }

    @Test(
        "a parquet shard is one multipart upload too: the images stream out in parts as rows come, the table and footer complete it, pyarrow and datasets read it whole"
    )
    func parquetShardInParts() async throws {
        try await Self.withClient { _, client in
            let bucket = try await Self.bucket(client)
            let table = S3Location(bucket: bucket, key: "sets/pq/00000.parquet")
            let destination = try BucketDestination(url: URL(string: "s3://\(bucket)/sets/pq")!, client: client, partSize: 5 << 20)
            let writer = try await DatasetWriter.open(
                destination, layout: .parquet, imageColumn: "jpg", shardSize: 12, slice: ListSlice(index: 0, count: 1))
            let images = (0..<12).map { $0 == 4 ? nil : Self.noise(1_000_000 + $0 * 777, seed: UInt64($0 + 1)) }
            try await Self.addAtOnce(0..<12, images: images, to: writer)
            try await writer.finish(total: 12)
            #expect(try await client.multipartUploads(bucket: bucket, prefix: "sets/").isEmpty)
            let object = try await client.getObject(table)
            #expect(object.info.contentType == "application/vnd.apache.parquet")
            // A multipart object's ETag ends with its count of parts: ~11 MB in parts of at least 5 MiB.
            #expect(object.info.etag?.hasSuffix("-2\"") == true, "\(object.info.etag ?? "no ETag")")
            let workspace = try CommandWorkspace()
            try object.data.write(to: URL(fileURLWithPath: workspace.path("00000.parquet")))
            let read = try await DatasetTests.readShards(imageColumn: "jpg", [workspace.path("00000.parquet")], cache: workspace.path("hf"))
            #expect((read["schema"] as? [[String]])?.map { $0[0] } == ["key", "status", "jpg"])
            let rows = try #require(read["pyarrow"] as? [[String: Any]])
            #expect(rows.count == 12)
            for row in rows {
                let key = try #require(row["key"] as? String)
                let position = try #require((0..<12).first { writer.key(forPosition: $0) == key })
                #expect(
                    row["image_sha256"] as? String == images[position].map { DatasetTests.sha256([UInt8]($0)) },
                    "\(key)'s image whole, in its row")
            }
            #expect(
                try await client.headObject(S3Location(bucket: bucket, key: "sets/pq/00000_stats.json")).size ?? 0 > 0)
        }
    }

    @Test(
        "a files shard puts one object per file, deletes what a stopped run left in its folder; failures are lines only; abandon drops an open upload"
    )
    func filesShardAndAbandon() async throws {
        try await Self.withClient { _, client in
            let bucket = try await Self.bucket(client)
            try await client.putObject(S3Location(bucket: bucket, key: "d/00003/000039.jpg"), data: Data("left by a killed run".utf8))
            let destination = try BucketDestination(url: URL(string: "s3://\(bucket)/d/")!, client: client)
            #expect(destination.prefix == "d/")
            // Slice 1 of 2, 5 rows a shard: this run's second shard is number 3.
            let writer = try await DatasetWriter.open(destination, layout: .files, shardSize: 5, slice: ListSlice(index: 1, count: 2))
            let image = Self.noise(3000, seed: 9)
            for position in 5..<8 {
                try await writer.add(Self.sample(position, key: writer.key(forPosition: position), image: position == 6 ? nil : image))
            }
            try await writer.finish(total: 8)
            var keys: [String] = []
            for try await object in client.objects(bucket: bucket, prefix: "d/") { keys.append(object.key) }
            // Keys of one digit for the row and five for the shard (5 rows a shard); the stale object gone.
            #expect(
                keys.sorted() == [
                    "d/00003.jsonl", "d/00003.parquet", "d/00003/000030.jpg", "d/00003/000030.json", "d/00003/000030.txt",
                    "d/00003/000032.jpg",
                    "d/00003/000032.json", "d/00003/000032.txt", "d/00003_stats.json",
                ], "\(keys)")
            let jpeg = try await client.getObject(S3Location(bucket: bucket, key: "d/00003/000030.jpg"))
            #expect(jpeg.data == image && jpeg.info.contentType == "image/jpeg")
            let stats = try DatasetTests.json(try await client.getObject(S3Location(bucket: bucket, key: "d/00003_stats.json")).data)
            #expect(stats["count"] as? Int == 3 && stats["failed_to_download"] as? Int == 1)
            #expect(try await destination.finishedShards() == [3], "a files shard's folder is not read as stats")

            let tars = try BucketDestination(url: URL(string: "s3://\(bucket)/t")!, client: client)
            let abandoned = try await DatasetWriter.open(tars, layout: .webdataset, shardSize: 10, slice: ListSlice(index: 0, count: 1))
            try await abandoned.add(Self.sample(0, key: abandoned.key(forPosition: 0), image: image))
            #expect(try await client.multipartUploads(bucket: bucket, prefix: "t/").count == 1)
            await abandoned.abandon()
            #expect(try await client.multipartUploads(bucket: bucket, prefix: "t/").isEmpty)
            #expect(try await tars.finishedShards().isEmpty)
        }
    }

    /// docs/crawling.md's fleet: N workers on one list, one bucket. Three processes, one of
    /// them SIGKILLed inside a shard, then rerun.
    @Test(
        "three processes with --shard I/3 write one dataset into one bucket; one killed mid-shard leaves no shard object and its rerun every sample in exactly one shard"
    )
    func threeWorkersOneKilled() async throws {
        let server = try await S3TestServer.shared()
        let client = Self.client(server)
        let origin = try await OriginServer.start()
        let workspace = try CommandWorkspace()
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))
        let bucket = try await Self.bucket(client)
        // The slices hash the URLs' text, port included: take URLs until slice 1 has 12 of them.
        var urls: [String] = []
        while urls.count < 45 || urls.filter({ ListSlice.slice(of: $0, count: 3) == 1 }).count < 12 {
            urls.append(origin.url("/w\(urls.count).jpg").absoluteString)
        }
        let slice1 = urls.filter { ListSlice.slice(of: $0, count: 3) == 1 }
        // Slice 1's rows 5...8 stall: with four at a time, once all four are asked for, rows 0...4
        // are in (its first shard of 4 complete, row 4 in the open upload of its second).
        let stalled = Set(slice1[5...8])
        for url in urls {
            let path = URL(string: url)!.path
            origin.route(
                path,
                OriginResponse(
                    headers: [("Content-Type", "image/jpeg")], body: jpeg, headerDelay: stalled.contains(url) ? .seconds(120) : .zero))
        }
        try urls.joined(separator: "\n").write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
        let output = "s3://\(bucket)/laion/part"
        func arguments(_ index: Int) -> [String] {
            [
                "prefetch", "-i", workspace.path("urls.txt"), "-o", output, "--output-format", "webdataset", "--shard-size", "4", "-j", "4",
                "--shard", "\(index)/3", "--json",
                // A stalled row is neither timed out nor tried again before the kill, however long
                // the four take to be asked for (a sanitizer build took over 15 s, the default timeout).
                "--timeout", "600", "--retries", "0",
            ]
        }
        var environment = ProcessInfo.processInfo.environment.merging(S3CommandTests.environment(server)) { $1 }
        func start(_ index: Int) throws -> ChildProcess {
            environment["WEBIMAGE_CACHE_DIR"] = workspace.path("cache-\(index)")
            return try ChildProcess(ChildProcess.builtProduct("webimage"), arguments(index), environment: environment)
        }
        let workers = try (0..<3).map(start)
        for url in stalled { _ = try await origin.waitForRequests(1, to: URL(string: url)!.path, timeout: .seconds(60)) }
        workers[1].kill()
        #expect(try await workers[1].waitForExit().signaled)
        for index in [0, 2] { #expect(try await workers[index].waitForExit() == (0, false), "worker \(index)") }

        // Slice 1's shards are numbered 1, 4, 7, ...: 1 is whole, 4 has only an open upload.
        let killedShard = "laion/part/00004.tar"
        let left = try await client.multipartUploads(bucket: bucket, prefix: "laion/")
        #expect(left.map(\.key) == [killedShard], "\(left)")
        let torn = await #expect(throws: WebImageError.self) { try await client.headObject(S3Location(bucket: bucket, key: killedShard)) }
        #expect(torn?.code == .badStatus(404))
        _ = try await client.headObject(S3Location(bucket: bucket, key: "laion/part/00001_stats.json"))

        for url in stalled { origin.route(URL(string: url)!.path, .ok(jpeg, contentType: "image/jpeg")) }
        let rerun = try start(1)
        #expect(try await rerun.waitForExit() == (0, false))
        let summary = try #require(try JSONSerialization.jsonObject(with: Data((rerun.lines.last ?? "").utf8)) as? [String: Any])
        #expect(summary["skipped"] as? Int == 4, "the first shard of slice 1 is not fetched again: \(summary)")

        #expect(try await client.multipartUploads(bucket: bucket, prefix: "laion/").isEmpty, "the killed run's upload was aborted")
        var names: [String] = []
        for try await object in client.objects(bucket: bucket, prefix: "laion/part/") { names.append(String(object.key.dropFirst(11))) }
        let shards = Set(names.filter { $0.hasSuffix("_stats.json") }.map { String($0.prefix(5)) })
        let expectedNames: Set<String> = Set(
            shards.flatMap { shard -> [String] in [shard + ".tar", shard + ".jsonl", shard + ".parquet", shard + "_stats.json"] })
        #expect(Set(names) == expectedNames, "\(names.sorted())")
        var seen: [String] = []
        for shard in shards {
            let records = String(
                decoding: try await client.getObject(S3Location(bucket: bucket, key: "laion/part/\(shard).jsonl")).data, as: UTF8.self
            )
            .split(separator: "\n").map { try! DatasetTests.json(Data($0.utf8)) }
            let members = try DatasetTests.members(
                ofTar: try await client.getObject(S3Location(bucket: bucket, key: "laion/part/\(shard).tar")).data)
            #expect(members.count == records.count * 2, "shard \(shard): KEY.jpg and KEY.json per row")
            for record in records {
                #expect(record["status"] as? String == "success")
                let key = try #require(record["key"] as? String)
                #expect(Int(key.prefix(5)) == Int(shard), "key \(key) in shard \(shard)")
                let image = try #require(members.first { $0.name == key + ".jpg" }, "\(key).jpg in shard \(shard)")
                #expect(ImageFormat(sniffing: [UInt8](image.data)) == .jpeg)
            }
            seen += records.compactMap { $0["url"] as? String }
        }
        #expect(seen.sorted() == urls.sorted(), "every sample in exactly one shard")
        for url in urls {
            #expect(origin.requestCount(URL(string: url)!.path) == (stalled.contains(url) ? 2 : 1), "\(url)")
        }
        try await origin.shutdown()
        try await client.shutdown()
    }

    @Test("-o s3:// is refused without a dataset layout; a missing bucket fails with S3's reason")
    func refusals() async throws {
        let server = try await S3TestServer.shared()
        let workspace = try CommandWorkspace()
        try "http://127.0.0.1:9/a.jpg\n".write(toFile: workspace.path("urls.txt"), atomically: true, encoding: .utf8)
        let named = try await workspace.run(
            ["prefetch", "-i", workspace.path("urls.txt"), "-o", "s3://b/p"], environment: S3CommandTests.environment(server))
        #expect(named.status != 0 && named.standardError.contains("--output-format files, webdataset or parquet"), "\(named.standardError)")
        let missing = try await workspace.run(
            [
                "prefetch", "-i", workspace.path("urls.txt"), "-o", "s3://no-such-bucket-\(UUID().uuidString.prefix(8).lowercased())/p",
                "--output-format", "tar",
            ],
            environment: S3CommandTests.environment(server))
        #expect(missing.status == 1 && missing.standardError.contains("NoSuchBucket"), "\(missing.standardError)")
    }
}
