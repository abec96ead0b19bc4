import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageS3
import WebImageTesting

// The examples of WebImageS3.docc/WebImageS3.md, verbatim, run against the test server.

/// Copies an object to another bucket and returns a link to the copy that works for an hour.
func publish(_ key: String, from source: String, to destination: String, client: S3Client) async throws -> URL {
    let object = try await client.getObject(S3Location(bucket: source, key: key))
    let copy = S3Location(bucket: destination, key: key)
    try await client.putObject(copy, data: object.data, contentType: object.info.contentType, cacheControl: object.info.cacheControl)
    return try client.presignedURL(copy, expires: 3600)
}

/// A manager that loads `s3://` URLs as well as `http(s)`, with the AWS settings it finds.
func bucketAwareManager(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ImageManager {
    let s3 = S3ImageLoader(client: S3Client(configuration: try .fromEnvironment(environment)))
    return ImageManager(loader: LoadersManager(loaders: [ImageDownloader.shared, s3]), configuration: ImageManagerConfiguration())
}

@Suite("WebImageS3's documented examples")
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

    @Test("bucketAwareManager reads the AWS variables and loads an s3:// image; its client needs no shutdown")
    func bucketAware() async throws {
        try await S3ClientTests.Harness.run { harness in
            let location = S3Location(bucket: S3ClientTests.bucket(), key: "1.png")
            try await harness.client().putObject(location, data: try S3ImageLoaderTests.png(width: 5, height: 3), contentType: "image/png")
            let manager = try bucketAwareManager(environment: [
                "HOME": "/nonexistent", "AWS_ENDPOINT_URL_S3": harness.server.endpoint.absoluteString,
                "AWS_ACCESS_KEY_ID": harness.server.accessKeyID, "AWS_SECRET_ACCESS_KEY": harness.server.secretAccessKey,
            ])
            // Neither read nor written: the manager's cache is the shared one.
            var context = LoadContext()
            context.storeCacheType = ImageCacheType.none
            let result = try await manager.image(for: location.url, options: .fromLoaderOnly, context: context)
            #expect(result.image?.pixelWidth == 5 && result.image?.pixelHeight == 3)
        }
    }
}
