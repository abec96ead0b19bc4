import Foundation
import Testing
import WebImage
import WebImageTesting
import WebImageTestSupport

/// Variants of a rotated JPEG (EXIF 6: stored 64x48, upright 48x64) are made from the upright
/// image and are upright themselves, so memory, disk and a later process agree; originals keep
/// their bytes and their orientation flag.
@Suite("Upright variants")
struct VariantOrientationTests {
    private func context(transform: Bool) -> LoadContext {
        var context = LoadContext()
        context.imageThumbnailPixelSize = (24, 32)
        if transform { context.imageTransformer = try? TransformSpec.parse("round:4") }
        return context
    }

    @Test("a thumbnail and a transformed thumbnail: upright in memory, the same from disk through a new memory tier")
    func memoryAndDisk() async throws {
        try await ManagerHarness.run { harness in
            let rotated = try Fixture.data("oriented-right.jpg")
            harness.origin.route("/rotated.jpg", .ok([UInt8](rotated), contentType: "image/jpeg"))
            let url = harness.origin.url("/rotated.jpg")
            for transform in [false, true] {
                let first = try await harness.makeManager().image(
                    for: url, options: .waitStoreCache, context: context(transform: transform))
                let image = try #require(first.image)
                #expect(image.orientation == .up && image.pixelWidth == 24 && image.pixelHeight == 32, "transform \(transform)")
                let again = try await harness.makeManager().image(for: url, context: context(transform: transform))
                #expect(again.cacheType == .disk, "transform \(transform)")
                let fromDisk = try #require(again.image)
                #expect(fromDisk.orientation == .up, "transform \(transform)")
                if transform {
                    // With transparency (the rounded corners) the cache encodes the variant as PNG: exact.
                    #expect(fromDisk.pixels == image.pixels, "the disk copy's pixels differ from the memory copy's")
                } else {
                    // An opaque thumbnail is stored as the thumbnail, encoded as JPEG by the cache (as
                    // SDWebImage stores it): the same size and orientation, pixels within JPEG's loss.
                    #expect((fromDisk.pixelWidth, fromDisk.pixelHeight) == (image.pixelWidth, image.pixelHeight))
                    let difference = zip(fromDisk.pixels.bytes, image.pixels.bytes).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
                    #expect(difference / image.pixels.bytes.count <= 4, "mean difference \(difference / image.pixels.bytes.count)")
                }
            }
            let original = try await harness.makeManager().image(for: url)
            #expect(original.image?.orientation == .right && original.image?.pixelWidth == 64, "the original keeps its flag")
            #expect(original.data == rotated)
        }
    }

    @Test("a transformed thumbnail written by one process and read from disk by the next is the same image")
    func freshProcess() async throws {
        let origin = try await OriginServer.start()
        origin.route("/rotated.jpg", .ok([UInt8](try Fixture.data("oriented-right.jpg")), contentType: "image/jpeg"))
        let workspace = try CommandWorkspace()
        let url = origin.url("/rotated.jpg").absoluteString
        let arguments = ["fetch", url, "--thumbnail", "24x32", "--transform", "round:4", "--format", "png", "--json"]
        let first = try await workspace.run(arguments + ["-o", workspace.path("first.png")])
        let second = try await workspace.run(arguments + ["-o", workspace.path("second.png")])
        try await origin.shutdown()
        #expect(first.jsonLines().first?["source"] as? String == "network", "\(first.standardError)")
        #expect(second.jsonLines().first?["source"] as? String == "disk", "\(second.standardError)")
        let images = try ["first.png", "second.png"].map { name in
            try CodersManager.shared.decode(try #require(FileManager.default.contents(atPath: workspace.path(name))))
        }
        #expect(images[0].pixelWidth == 24 && images[0].pixelHeight == 32)
        #expect(images[0].pixels == images[1].pixels)
    }
}
