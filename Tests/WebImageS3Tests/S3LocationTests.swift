import Foundation
import Testing
import WebImageS3

@Suite("s3:// locations")
struct S3LocationTests {
    @Test("s3://BUCKET/KEY parses with the key decoded and the version from versionId; the URL round-trips")
    func parses() throws {
        let location = try #require(S3Location(url: URL(string: "s3://photos/2024/a%20b%2Bc/%C3%A9t%C3%A9.jpg?versionId=v%2F1")!))
        #expect(location == S3Location(bucket: "photos", key: "2024/a b+c/été.jpg", versionID: "v/1"))
        #expect(S3Location(url: location.url) == location)
        #expect(location.description == "s3://photos/2024/a b+c/été.jpg?versionId=v/1")
        #expect(S3Location(url: URL(string: "s3://b//double//slash")!)?.key == "/double//slash")
    }

    @Test("not a location: another scheme, no bucket, no key", arguments: ["http://b/k", "s3:///k", "s3://b", "s3://b/", "S3X://b/k"])
    func refuses(_ text: String) {
        #expect(URL(string: text).flatMap(S3Location.init(url:)) == nil)
    }
}
