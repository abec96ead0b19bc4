import Foundation
import Testing
import WebImage
import WebImageCore
import WebImageGCS
import WebImageTesting
@testable import WebImageDataset
import WebImageTestSupport

/// `prefetch -i gs://... -o gs://BUCKET/PREFIX`: img2dataset's shards in Cloud Storage, each
/// streamed shard one resumable upload in chunks of 256 KiB multiples
/// (https://cloud.google.com/storage/docs/performing-resumable-uploads), against fake-gcs-server.
@Suite("prefetch with gs:// (dataset lists and shards in Cloud Storage)")
struct DatasetGCSTests {
    @Test(
        "a tar shard is one resumable upload: chunks go out as it grows, rows added at once keep whole members, the object appears only complete"
    )
    func tarShardInChunks() async throws {
        let emulator = try await GCSTestServer.start()
        let client = GCSClient(configuration: GCSConfiguration(endpoint: emulator.endpoint, maximumAttempts: 1))
        var failure: (any Error)?
        do {
            try await emulator.createBucket("sets")
            // Parts of 256 KiB: ~3 MB of rows make a dozen chunks.
            let destination = try BucketDestination(
                url: URL(string: "gs://sets/one")!, client: client, partSize: GCSClient.chunkGranularity)
            let writer = try await DatasetWriter.open(destination, layout: .webdataset, shardSize: 12, slice: ListSlice(index: 0, count: 1))
            let images = (0..<12).map { DatasetBucketTests.noise(250_000 + $0 * 777, seed: UInt64($0 + 1)) }
            try await DatasetBucketTests.addAtOnce(0..<11, images: images, to: writer)
            #expect(try await emulator.get(bucket: "sets", object: "one/00000.tar") == nil, "no object before the shard is whole")
            try await writer.add(DatasetBucketTests.sample(11, key: writer.key(forPosition: 11), image: images[11]))
            try await writer.finish(total: 12)
            let tar = try #require(try await emulator.get(bucket: "sets", object: "one/00000.tar"))
            let members = try DatasetTests.members(ofTar: tar)
            #expect(members.count == 36, "KEY.jpg, KEY.txt, KEY.json for each of 12 rows")
            for position in 0..<12 {
                let key = writer.key(forPosition: position)
                #expect(members.first { $0.name == key + ".jpg" }?.data == images[position], "\(key).jpg whole")
            }
            let stats = try DatasetTests.json(try #require(try await emulator.get(bucket: "sets", object: "one/00000_stats.json")))
            #expect(stats["count"] as? Int == 12 && stats["successes"] as? Int == 12)
            #expect(try await destination.finishedShards() == [0])
        } catch {
            failure = error
        }
        try await client.shutdown()
        try await emulator.stop()
        if let failure { throw failure }
    }

    @Test(
        "prefetch -i gs://BUCKET/list.csv -o gs://BUCKET/PREFIX: the list read from the bucket, every sample in one shard; a rerun skips the finished shards; -i gs://BUCKET/PREFIX/ reads the prefix's lists"
    )
    func command() async throws {
        let emulator = try await GCSTestServer.start()
        let origin = try await OriginServer.start()
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))
        for index in 0..<10 { origin.route("/g\(index).jpg", .ok(jpeg, contentType: "image/jpeg")) }
        let csv =
            "url,caption\n" + (0..<10).map { "\(origin.url("/g\($0).jpg").absoluteString),\"a, \($0)\"" }.joined(separator: "\n") + "\n"
        try await emulator.createBucket("data")
        try await emulator.put(Data(csv.utf8), bucket: "data", object: "lists/captions.csv", contentType: "text/csv")
        let workspace = try CommandWorkspace()
        let environment = ["STORAGE_EMULATOR_HOST": emulator.endpoint.absoluteString, "HOME": "/nonexistent"]
        let arguments = [
            "prefetch", "-i", "gs://data/lists/captions.csv", "--input-format", "csv", "--caption-col", "caption", "-o",
            "gs://data/sets/cc",
            "--output-format", "webdataset", "--shard-size", "4", "--json",
        ]
        let run = try await workspace.run(arguments, environment: environment)
        #expect(run.status == 0 && run.json["succeeded"] as? Int == 10, "\(run.standardError)")
        var urls: [String] = []
        for shard in ["00000", "00001", "00002"] {
            let lines = String(
                decoding: try #require(try await emulator.get(bucket: "data", object: "sets/cc/\(shard).jsonl")), as: UTF8.self)
            let tar = try #require(try await emulator.get(bucket: "data", object: "sets/cc/\(shard).tar"))
            let records = try lines.split(separator: "\n").map { try DatasetTests.json(Data($0.utf8)) }
            #expect(try DatasetTests.members(ofTar: tar).count == records.count * 3, "KEY.jpg, KEY.txt, KEY.json per row")
            #expect(try await emulator.get(bucket: "data", object: "sets/cc/\(shard).parquet") != nil)
            urls += records.compactMap { $0["url"] as? String }
        }
        #expect(urls.sorted() == (0..<10).map { origin.url("/g\($0).jpg").absoluteString }.sorted())
        let again = try await workspace.run(arguments, environment: environment)
        #expect(again.status == 0 && again.json["skipped"] as? Int == 10, "\(again.standardError)")
        // A prefix's own lists of the format, in name order: not its "sub-folders", not other files.
        for (name, body) in [("parts/b.csv", csv), ("parts/a.csv", csv), ("parts/x/c.csv", csv), ("parts/notes.md", "x")] {
            try await emulator.put(Data(body.utf8), bucket: "data", object: name, contentType: "text/csv")
        }
        let prefix = try await workspace.run(
            ["prefetch", "-i", "gs://data/parts/", "--input-format", "csv", "--count-rows", "--json"], environment: environment)
        #expect(prefix.status == 0 && prefix.json["rows"] as? Int == 20, "\(prefix.lines) \(prefix.standardError)")
        let missing = try await workspace.run(["prefetch", "-i", "gs://data/none.csv"], environment: environment)
        #expect(missing.status == 1 && missing.standardError.contains("404"), "\(missing.standardError)")
        try await origin.shutdown()
        try await emulator.stop()
    }
}
