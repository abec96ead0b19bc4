import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// The fixture corpus (scripts/fixtures/make_corpus.py): every file decodes to Pillow's reading,
/// frame by frame, within the tolerance stated for its format (exact for PNG, GIF and lossless
/// WebP; 2 levels for JPEG and lossy WebP). Both are straight RGBA; a transparent pixel's colour
/// is not compared (Pillow keeps a GIF's transparent palette entry there, we keep zeros).
@Suite("Fixture corpus")
struct CorpusTests {
    struct Expectation: Decodable {
        let width: Int
        let height: Int
        let frames: [[UInt8]]
        let tolerance: Int
        /// How many frames Pillow's reading is right for (see the script on GIF disposal 3).
        let comparedFrames: Int
    }

    static let manifest: [String: Expectation] = {
        (try? JSONDecoder().decode([String: Expectation].self, from: Fixture.data("corpus/expected.json"))) ?? [:]
    }()

    @Test(arguments: manifest.keys.sorted())
    func decodesLikePillow(name: String) throws {
        let expected = try #require(Self.manifest[name])
        let image = try CodersManager.shared.decode(try Fixture.data("corpus/" + name))
        #expect(image.pixelWidth == expected.width && image.pixelHeight == expected.height, "\(name)")
        #expect(image.frames.count == expected.frames.count, "\(name): \(image.frames.count) frames")
        for (index, straight) in expected.frames.enumerated().prefix(expected.comparedFrames) where index < image.frames.count {
            let ours = image.frames[index].pixels
            guard straight.count == expected.width * expected.height * 4, ours.bytes.count == straight.count else {
                Issue.record("\(name) frame \(index): \(ours.width)x\(ours.height) against \(straight.count / 4) pixels")
                continue
            }
            let difference = Self.maximumDifference(ours.bytes, straight)
            #expect(difference <= expected.tolerance, "\(name) frame \(index): max channel difference \(difference)")
        }
    }

    /// The largest channel difference between two straight RGBA pixel arrays, colour compared
    /// only where both are visible.
    static func maximumDifference(_ ours: [UInt8], _ theirs: [UInt8]) -> Int {
        var worst = 0
        for pixel in stride(from: 0, to: ours.count, by: 4) {
            worst = max(worst, abs(Int(ours[pixel + 3]) - Int(theirs[pixel + 3])))
            guard ours[pixel + 3] > 0 || theirs[pixel + 3] > 0 else { continue }
            for channel in pixel..<pixel + 3 { worst = max(worst, abs(Int(ours[channel]) - Int(theirs[channel]))) }
        }
        return worst
    }

    /// Together with the PNG suite and the other fixtures, the corpus passes 150 files.
    @Test func theCorpusIsLarge() throws {
        let others = try FileManager.default.contentsOfDirectory(atPath: Fixture.url("gradient.jpg").deletingLastPathComponent().path)
            .filter { ["jpg", "png", "gif", "webp"].contains(URL(fileURLWithPath: $0).pathExtension) }
        let suite = try FileManager.default.contentsOfDirectory(atPath: Fixture.url("png-suite").path).filter { $0.hasSuffix(".png") }
        #expect(Self.manifest.count + suite.count + others.count >= 150, "\(Self.manifest.count) + \(suite.count) + \(others.count)")
    }
}
