import Foundation
import Testing
import WebImage

/// The fixture corpus (scripts/fixtures/make_corpus.py): every file decodes to Pillow's reading,
/// frame by frame, within the tolerance stated for its format (exact for PNG, GIF and lossless
/// WebP; 2 levels for JPEG and lossy WebP).
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
            let theirs = PixelBuffer(width: expected.width, height: expected.height, straightRGBA: straight)
            let difference = zip(ours.bytes, theirs.bytes).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(difference <= expected.tolerance, "\(name) frame \(index): max channel difference \(difference)")
        }
    }

    /// Together with the PNG suite and the other fixtures, the corpus passes 150 files.
    @Test func theCorpusIsLarge() throws {
        let others = try FileManager.default.contentsOfDirectory(atPath: Fixture.url("gradient.jpg").deletingLastPathComponent().path)
            .filter { ["jpg", "png", "gif", "webp"].contains(URL(fileURLWithPath: $0).pathExtension) }
        let suite = try FileManager.default.contentsOfDirectory(atPath: Fixture.url("png-suite").path).filter { $0.hasSuffix(".png") }
        #expect(Self.manifest.count + suite.count + others.count >= 150, "\(Self.manifest.count) + \(suite.count) + \(others.count)")
    }
}
