package import Foundation
import WebImage
package import WebImageS3
package import WebImageTesting

/// Objects for the S3 tests: small PNGs, fresh bucket names, and puts with the test server's
/// own identity.
package enum S3Seeding {
    /// A grey PNG of that size.
    package static func png(width: Int, height: Int) throws -> Data {
        let pixels = [UInt8](repeating: 200, count: width * height * 4)
        return try CodersManager.shared.encode(Image(pixels: PixelBuffer(width: width, height: height, straightRGBA: pixels)), as: .png)
    }

    /// A bucket name no other test uses.
    package static func bucket() -> String {
        "srv-" + UUID().uuidString.lowercased().prefix(12).replacingOccurrences(of: "-", with: "")
    }

    /// Seeds objects with the server's own identity.
    package static func seed(_ server: S3TestServer, _ objects: [(S3Location, Data)]) async throws -> [S3PutResult] {
        let client = S3Client(
            configuration: S3Configuration(
                endpoint: server.endpoint, usesPathStyle: true,
                credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: server.secretAccessKey)))
        var results: [S3PutResult] = []
        do {
            for (location, data) in objects { results.append(try await client.putObject(location, data: data, contentType: "image/png")) }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        return results
    }
}
