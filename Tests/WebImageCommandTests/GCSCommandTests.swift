import Foundation
import Testing
import WebImage
import WebImageTesting
import WebImageTestSupport

/// `webimage fetch` and `webimage info` reading `gs://` URLs with Google's settings of their
/// environment (`STORAGE_EMULATOR_HOST`, as Google's client libraries read it), against
/// fake-gcs-server on 127.0.0.1.
@Suite("webimage with gs:// URLs")
struct GCSCommandTests {
    @Test("fetch and info read a gs:// image; a missing object fails with the reason, exit 1")
    func fetchAndInfo() async throws {
        let emulator = try await GCSTestServer.start()
        let pixels = [UInt8](repeating: 90, count: 20 * 10 * 4)
        let png = try CodersManager.shared.encode(Image(pixels: PixelBuffer(width: 20, height: 10, straightRGBA: pixels)), as: .png)
        try await emulator.createBucket("photos")
        try await emulator.put(png, bucket: "photos", object: "dir/a b.png", contentType: "image/png")
        let environment = ["STORAGE_EMULATOR_HOST": emulator.endpoint.absoluteString, "HOME": "/nonexistent"]
        let workspace = try CommandWorkspace()
        let url = "gs://photos/dir/a%20b.png"
        let fetched = try await workspace.run(["fetch", url, "-o", workspace.path("a.png"), "--json"], environment: environment)
        #expect(fetched.status == 0, "\(fetched.standardError)")
        #expect(fetched.jsonLines().first?["width"] as? Int == 20)
        let info = try await workspace.run(["info", url, "--json"], environment: environment)
        #expect(info.status == 0 && info.json["height"] as? Int == 10, "\(info.standardError)")
        let missing = try await workspace.run(["fetch", "gs://photos/none.png"], environment: environment)
        #expect(missing.status == 1 && missing.standardError.contains("404"), "\(missing.standardError)")
        try await emulator.stop()
    }
}
