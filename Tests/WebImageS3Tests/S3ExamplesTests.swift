import AsyncHTTPClient
import Foundation
import Testing
import WebImageS3
import WebImageTesting

// The example of WebImageS3.docc/WebImageS3.md and the README, verbatim, run against the test server.

/// Copies an object to another bucket and returns a link to the copy that works for an hour.
func publish(_ key: String, from source: String, to destination: String, client: S3Client) async throws -> URL {
    let object = try await client.getObject(S3Location(bucket: source, key: key))
    let copy = S3Location(bucket: destination, key: key)
    try await client.putObject(copy, data: object.data, contentType: object.info.contentType, cacheControl: object.info.cacheControl)
    return try client.presignedURL(copy, expires: 3600)
}

@Suite("WebImageS3's documented example")
struct S3ExamplesTests {
    @Test("publish copies an object and the link it returns serves the copy to a client without credentials")
    func publishes() async throws {
        try await S3ClientTests.Harness.run { harness in
            let client = harness.client()
            let (source, destination) = (S3ClientTests.bucket(), S3ClientTests.bucket())
            try await client.putObject(S3Location(bucket: destination, key: "placeholder"), data: Data())
            try await client.putObject(
                S3Location(bucket: source, key: "cats/1.jpg"), data: Data("jpeg".utf8), contentType: "image/jpeg",
                cacheControl: "max-age=600")
            let link = try await publish("cats/1.jpg", from: source, to: destination, client: client)
            let http = HTTPClient(eventLoopGroupProvider: .singleton)
            let response = try await http.execute(HTTPClientRequest(url: link.absoluteString), timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 20)
            try await http.shutdown()
            #expect(response.status.code == 200 && body == .init(string: "jpeg"))
            #expect(response.headers.first(name: "content-type") == "image/jpeg")
            #expect(response.headers.first(name: "cache-control") == "max-age=600")
        }
    }
}
