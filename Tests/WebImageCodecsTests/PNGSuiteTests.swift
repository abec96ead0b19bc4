import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// Every PNG colour type and bit depth (scripts/fixtures/make_png_suite.py): each decodes to
/// exactly the straight RGBA its samples mean, which is also Pillow's reading except for 16-bit
/// grey (Pillow clips it instead of scaling).
@Suite("PNG colour types and bit depths")
struct PNGSuiteTests {
    static let expected: [String: [UInt8]] = {
        (try? JSONDecoder().decode([String: [UInt8]].self, from: Fixture.data("png-suite/expected.json"))) ?? [:]
    }()

    @Test(arguments: expected.keys.sorted())
    func decodesExactly(name: String) throws {
        let image = try CodersManager.shared.decode(try Fixture.data("png-suite/" + name))
        let straight = try #require(Self.expected[name])
        #expect(image.pixelWidth == 7 && image.pixelHeight == 5)
        #expect(image.pixels == PixelBuffer(width: 7, height: 5, straightRGBA: straight), "\(name)")
        let hasTransparency = stride(from: 3, to: straight.count, by: 4).contains { straight[$0] != 255 }
        #expect(!hasTransparency || image.hasAlpha, "\(name) has transparency")
    }

    @Test func theSuiteIsComplete() {
        #expect(Self.expected.count == 19)
    }
}
