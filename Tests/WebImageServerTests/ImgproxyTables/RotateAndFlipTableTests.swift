import Foundation
import Testing
import WebImage
import WebImageTestSupport
import WebImageTesting

/// imgproxy's `processing/rotate_and_flip_test.go` (v4, eef3b312) as ours. Its expected values are
/// relations between results, not libvips' hashes, so they hold here as they are: the same pixels
/// tagged with each EXIF orientation give one result with `auto_rotate:0` and eight with auto-rotation
/// on; each of the sixteen `rotate` and `flip` combinations differs from the one before it. Its
/// `orientation-N.png` files are made here: one 6x4 picture with no symmetry, tagged 1 to 8.
@Suite("imgproxy's tables: rotate and flip (processing/rotate_and_flip_test.go)", .serialized)
struct ImgproxyRotateAndFlipTableTests {
    /// The picture, every pixel a colour of its own, tagged with each orientation (PNG `eXIf`).
    static func tagged() throws -> [[UInt8]] {
        var pixels: [UInt8] = []
        for index in 0..<24 { pixels += [UInt8(index * 10), UInt8(255 - index * 10), UInt8(index % 5 * 50), 255] }
        return try ExifOrientation.allCases.map { orientation in
            var image = Image(pixels: PixelBuffer(width: 6, height: 4, straightRGBA: pixels))
            image.orientation = orientation
            return [UInt8](try CodersManager.shared.encode(image, as: .png))
        }
    }

    /// The sixteen combinations `collectRotationsFlips` makes, in its order.
    static let combinations: [String] = [0, 90, 180, 270].flatMap { rotate in
        [(false, false), (false, true), (true, false), (true, true)].map { flip in
            "rotate:\(rotate)/flip:\(flip.0 ? 1 : 0):\(flip.1 ? 1 : 0)"
        }
    }

    @Test("TestOrientationAutoRotate, TestRotateFlip and TestRotateFlipAutoRotate")
    func rotateAndFlip() async throws {
        let files = try Self.tagged()
        #expect(try files.map { try CodersManager.shared.decode(Data($0)).orientation } == ExifOrientation.allCases, "each tag read back")
        try await ServerHarness.inProcess { harness throws in
            for (index, file) in files.enumerated() {
                harness.origin.route("/orientation-\(index).png", .ok(file, contentType: "image/png"))
            }
            func result(_ index: Int, _ options: String, autoRotate: Bool) async throws -> PixelBuffer {
                let path = harness.signedPlain(
                    options + (autoRotate ? "" : "/auto_rotate:0"), "/orientation-\(index).png", extension: "png")
                let answer = try await harness.get(path)
                #expect(answer.status == 200, "\(answer.text)")
                return try CodersManager.shared.decode(answer.body).pixels
            }
            // TestOrientationAutoRotate: one result without auto-rotation, each tag its own with it.
            let plain = try await (0..<8).asyncMap { try await result($0, "w:0", autoRotate: false) }
            #expect(plain.allSatisfy { $0 == plain[0] })
            let rotated = try await (0..<8).asyncMap { try await result($0, "w:0", autoRotate: true) }
            #expect(zip(rotated, rotated.dropFirst()).allSatisfy { $0 != $1 })
            // TestRotateFlip: without auto-rotation every file gives the same sixteen, each unlike
            // the one before; TestRotateFlipAutoRotate: with it, each file's differ from the first's.
            var sets: [[Bool: [PixelBuffer]]] = []
            for index in 0..<8 {
                var set: [Bool: [PixelBuffer]] = [:]
                for autoRotate in [false, true] {
                    set[autoRotate] = try await Self.combinations.asyncMap { try await result(index, $0, autoRotate: autoRotate) }
                    let results = set[autoRotate]!
                    #expect(zip(results, results.dropFirst()).allSatisfy { $0 != $1 }, "file \(index), auto-rotate \(autoRotate)")
                }
                sets.append(set)
            }
            for index in 1..<8 {
                #expect(sets[index][false] == sets[0][false], "file \(index) without auto-rotation")
                #expect(zip(sets[index][true]!, sets[0][true]!).allSatisfy { $0 != $1 }, "file \(index) with auto-rotation")
            }
        }
    }
}
