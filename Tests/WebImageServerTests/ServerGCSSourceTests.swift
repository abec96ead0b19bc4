import Foundation
import Testing
import WebImage
import WebImageGCS
@testable import WebImageServer
import WebImageTesting
import WebImageTestSupport

/// `gs://` sources in the proxy, as imgproxy reads them (`storage/gcs/reader.go`: an empty
/// bucket or object is 404, a bucket outside `IMGPROXY_GCS_ALLOWED_BUCKETS` or on
/// `_DENIED_BUCKETS` is refused, the query a generation number; `fetcher/transport/url.go`'s
/// split, as for `s3://`), against fake-gcs-server on 127.0.0.1.
@Suite("Server: gs:// sources")
struct ServerGCSSourceTests {
    static func configuration(_ emulator: GCSTestServer, allowed: [String] = [], denied: [String] = []) -> ImageServerConfiguration {
        var configuration = ServerHarness.configuration()
        configuration.allowsLoopbackSources = false
        configuration.gcsSources = GCSSources(
            client: GCSConfiguration(endpoint: emulator.endpoint, maximumAttempts: 1), allowedBuckets: allowed, deniedBuckets: denied)
        return configuration
    }

    static func png(width: Int, height: Int) throws -> Data {
        let pixels = [UInt8](repeating: 120, count: width * height * 4)
        return try CodersManager.shared.encode(Image(pixels: PixelBuffer(width: width, height: height, straightRGBA: pixels)), as: .png)
    }

    static func withEmulator(_ body: (GCSTestServer) async throws -> Void) async throws {
        let emulator = try await GCSTestServer.start()
        var failure: (any Error)?
        do { try await body(emulator) } catch { failure = error }
        try await emulator.stop()
        if let failure { throw failure }
    }

    @Test("a gs:// source is read and processed, base64 too; a missing object, an empty one and a generation that is not there are 404")
    func processes() async throws {
        try await Self.withEmulator { emulator in
            try await emulator.createBucket("photos")
            try await emulator.put(try Self.png(width: 40, height: 20), bucket: "photos", object: "a b/c.png", contentType: "image/png")
            try await ServerHarness.inProcess(Self.configuration(emulator)) { harness throws in
                let answer = try await harness.get(harness.signer.sign("/rs:fit:10:10/plain/gs://photos/a%20b/c.png@png"))
                #expect(answer.status == 200, "\(answer.text)")
                let header = try ImageHeader(data: [UInt8](answer.body))
                #expect(header.width == 10 && header.height == 5)
                let encoded = URLSigner.base64URL(Array("gs://photos/a b/c.png".utf8))
                #expect(try await harness.get(harness.signer.sign("/w:4/\(encoded).png")).status == 200)
                #expect(try await harness.get(harness.signer.sign("/w:4/plain/gs://photos/none.png@png")).status == 404)
                #expect(try await harness.get(harness.signer.sign("/w:4/plain/gs://photos/@png")).status == 404, "no object")
                let generation = try await harness.get(harness.signer.sign("/w:4/plain/gs://photos/a%20b/c.png%3F1@png"))
                #expect(generation.status == 404, "generation 1 is not the object's: \(generation.text)")
            }
        }
    }

    @Test("bucket rules refuse with 403 and the allow-list's gs:// entries with 404; without IMGPROXY_USE_GCS a gs:// source is a 400")
    func refusals() async throws {
        try await Self.withEmulator { emulator in
            for bucket in ["open", "closed"] {
                try await emulator.createBucket(bucket)
                try await emulator.put(try Self.png(width: 4, height: 4), bucket: bucket, object: "x.png", contentType: "image/png")
            }
            try await ServerHarness.inProcess(Self.configuration(emulator, denied: ["closed"])) { harness throws in
                #expect(try await harness.get(harness.signer.sign("/w:2/plain/gs://open/x.png@png")).status == 200)
                let denied = try await harness.get(harness.signer.sign("/w:2/plain/gs://closed/x.png@png"))
                #expect(denied.status == 403 && denied.text.contains("GCS bucket closed"), "\(denied.text)")
            }
            var listed = Self.configuration(emulator)
            listed.allowedSources = ["gs://open/x"]
            try await ServerHarness.inProcess(listed) { harness throws in
                #expect(try await harness.get(harness.signer.sign("/w:2/plain/gs://open/x.png@png")).status == 200)
                #expect(try await harness.get(harness.signer.sign("/w:2/plain/gs://closed/x.png@png")).status == 404, "not on the list")
            }
            try await ServerHarness.inProcess(ServerHarness.configuration()) { harness throws in
                let off = try await harness.get(harness.signer.sign("/w:2/plain/gs://open/x.png@png"))
                #expect(off.status == 400 && off.text.contains("IMGPROXY_USE_GCS"), "\(off.text)")
            }
        }
    }
}
