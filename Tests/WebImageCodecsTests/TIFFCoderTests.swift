import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// TIFF through libtiff (issue 17): scripts/fixtures/make_tiff.py's files beside Pillow's reading
/// (libtiff's arithmetic for CMYK), pages as frames, the Orientation tag, encoding read back, and
/// damaged copies failing cleanly.
@Suite("TIFF")
struct TIFFCoderTests {
    struct Expectation: Decodable {
        let width: Int
        let height: Int
        let pages: [[UInt8]]
    }

    static let manifest: [String: Expectation] = Fixture.manifest("tiff")

    /// Exact, but for JPEG compression (Pillow's wheel and Debian's libjpeg), 16-bit grey
    /// (libtiff's rounding) and P3 (lcms's 8-bit transforms beside Pillow's, as in the colour
    /// tests). The pages libtiff's RGBA interface refuses (12-bit, 16-bit CMYK, 32-bit float and
    /// integer) are exact against the script's expectation.
    static func tolerance(_ name: String) -> Int { name.contains("jpeg") ? 3 : name.contains("16") || name.hasPrefix("p3") ? 1 : 0 }

    @Test(arguments: manifest.keys.sorted())
    func decodesLikePillow(name: String) throws {
        let expected = try #require(Self.manifest[name])
        let data = try Fixture.data("tiff/" + name)
        let image = try CodersManager.shared.decode(data)
        #expect(image.orientation == (name.hasPrefix("orientation-6") ? .right : .up))
        let header = try ImageHeader(data: data)
        #expect(header.width == image.pixelWidth && header.height == image.pixelHeight && header.orientation == image.orientation)
        // The rows are as stored with the tag reported; Pillow's reading is upright.
        let upright = try #require(OrientationTransformer().transform(image, forKey: name))
        #expect(upright.sourceFormat == .tiff && upright.pixelWidth == expected.width && upright.pixelHeight == expected.height)
        #expect(image.frames.count == expected.pages.count, "\(name): \(image.frames.count) frames")
        for (frame, page) in zip(upright.frames, expected.pages) {
            let ours = frame.pixels.bytes
            let difference = CorpusTests.maximumDifference(ours, page)
            // Unassociated alpha is read as stored, tiled or in separate planes too: exact.
            #expect(difference <= Self.tolerance(name), "\(name): max channel difference \(difference)")
        }
    }

    @Test("the ICCProfile tag is converted to sRGB, or kept and written back")
    func colorProfile() throws {
        let data = try Fixture.data("tiff/p3.tiff")
        let kept = try CodersManager.shared.decode(data, options: DecodeOptions(keepsColorProfile: true))
        let p3 = try Fixture.data("color/display-p3.icc")
        #expect(kept.colorProfile == p3)
        let converted = try CodersManager.shared.decode(data)
        #expect(converted.colorProfile == nil && CorpusTests.maximumDifference(converted.pixels.bytes, kept.pixels.bytes) > 10)
        let written = try CodersManager.shared.encode(kept, as: .tiff)
        let again = try CodersManager.shared.decode(written, options: DecodeOptions(keepsColorProfile: true))
        #expect(again.colorProfile == p3 && again.pixels == kept.pixels)
    }

    @Test("encoding writes every page, alpha kept, and reads back exactly")
    func encodesAndReadsBack() throws {
        for name in ["rgba-lzw.tiff", "multi-page.tiff"] {
            let original = try CodersManager.shared.decode(try Fixture.data("tiff/" + name))
            let encoded = try CodersManager.shared.encode(original, as: .tiff)
            #expect(ImageFormat(sniffing: encoded) == .tiff)
            let decoded = try CodersManager.shared.decode(encoded)
            #expect(decoded.frames.map(\.pixels) == original.frames.map(\.pixels), "\(name)")
            #expect(decoded.hasAlpha == original.hasAlpha)
        }
        let firstOnly = try CodersManager.shared.decode(
            try Fixture.data("tiff/multi-page.tiff"), options: DecodeOptions(firstFrameOnly: true))
        #expect(firstOnly.frames.count == 1)
    }

    @Test("truncated and garbled copies fail with a typed error; sizes over the limit are refused from the header")
    func damagedFiles() throws {
        for name in Self.manifest.keys.sorted() {
            DamagedCopies.decode(try Fixture.data("tiff/" + name), cuts: 30, garbles: 30, bytes: 6)
        }
        #expect(throws: WebImageError.self) { try CodersManager.shared.decode(try Fixture.data("tiff/rgb-none.tiff").prefix(20)) }
        #expect(throws: WebImageError(.tooLarge)) {
            try CodersManager.shared.decode(
                try Fixture.data("tiff/rgb-lzw.tiff"), options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: 100)))
        }
    }
}
