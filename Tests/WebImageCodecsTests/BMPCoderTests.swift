import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// BMP and ICO (issue 17), parsed in Swift: every file of scripts/fixtures/make_bmp.py decodes to
/// Pillow's reading exactly (colour compared where visible; 16-bit fields within 1), the ICO entry nearest a thumbnail is
/// picked, and damaged copies fail with a typed error.
@Suite("BMP and ICO")
struct BMPCoderTests {
    static let manifest: [String: RGBAExpectation] = Fixture.manifest("bmp")

    @Test(arguments: manifest.keys.sorted())
    func decodesLikePillow(name: String) throws {
        let expected = try #require(Self.manifest[name])
        let data = try Fixture.data("bmp/" + name)
        let image = try CodersManager.shared.decode(data)
        #expect(
            image.pixelWidth == expected.width && image.pixelHeight == expected.height, "\(name): \(image.pixelWidth)x\(image.pixelHeight)")
        let difference = CorpusTests.maximumDifference(image.pixels.bytes, expected.rgba)
        // 5- and 6-bit fields: we round (v × 255 / 31), Pillow truncates; everything else is exact.
        #expect(difference <= (name.hasPrefix("16-bit") ? 1 : 0), "\(name): max channel difference \(difference)")
        let header = try ImageHeader(data: data)
        #expect(header.width == expected.width && header.height == expected.height)
    }

    @Test("an ICO gives the entry nearest the thumbnail, else its largest")
    func icoEntries() throws {
        let data = try Fixture.data("bmp/mixed.ico")
        #expect(try CodersManager.shared.decode(data).pixelWidth == 32)
        let small = try CodersManager.shared.decode(data, options: DecodeOptions(thumbnail: ThumbnailSize(width: 16, height: 16)))
        #expect(small.pixelWidth == 16 && small.sourceFormat == .ico && small.hasAlpha)
        let middle = try CodersManager.shared.decode(data, options: DecodeOptions(thumbnail: ThumbnailSize(width: 20, height: 20)))
        #expect(middle.pixelWidth == 20, "the 24 px entry, resampled to the thumbnail")
    }

    @Test("truncated and garbled copies fail with a typed error; sizes over the limit are refused from the header")
    func damagedFiles() throws {
        for name in Self.manifest.keys.sorted() {
            DamagedCopies.decode(try Fixture.data("bmp/" + name), cuts: 50, garbles: 60, bytes: 6)
        }
        #expect(throws: WebImageError.self) { try CodersManager.shared.decode(try Fixture.data("bmp/24-bit.bmp").prefix(100)) }
        var huge = try Fixture.data("bmp/24-bit.bmp")
        huge.replaceSubrange(18..<26, with: [0x00, 0x40, 0, 0, 0x00, 0x40, 0, 0])  // 16384 x 16384
        #expect(throws: WebImageError(.tooLarge)) { try CodersManager.shared.decode(huge) }
    }
}
