import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// What each format's container says of its colour (``Image/sourceColor``), for the formats whose
/// descriptions issue 62 names beside AVIF's, PNG's and JPEG's (in HDRRenderingTests): HEIF's luma
/// bit depth and `nclx`, JPEG XL's bits per sample and encoded colour space (libjxl's enums are
/// H.273's code points), TIFF's BitsPerSample. The fixtures' depths are what they were made with:
/// `heif/ten-bit.heic` by libheif's `heif-enc -b 10` from a 16-bit PNG, the others as their names say.
@Suite("Colour descriptions")
struct ColorDescriptionTests {
    static func color(_ fixture: String) throws -> ColorDescription? {
        try CodersManager.shared.decode(try Fixture.data(fixture)).sourceColor
    }

    @Test("HEIF: the luma bit depth")
    func heif() throws {
        #expect(try Self.color("heif/ten-bit.heic")?.bitDepth == 10)
        #expect(try Self.color("heif/photo.heic")?.bitDepth == 8)
    }

    @Test("JPEG XL: bits per sample, and the encoded transfer and primaries (none for a file described by an ICC profile)")
    func jpegXL() throws {
        let grey = try #require(try Self.color("jxl/grey16.jxl"))
        #expect(grey.bitDepth == 16 && grey.transfer == 13 && grey.primaries == nil)
        let photo = try #require(try Self.color("jxl/photo.jxl"))
        #expect(photo.bitDepth == 8 && photo.primaries == 1 && photo.transferName == "srgb" && !photo.isHDR)
        let profiled = try #require(try Self.color("jxl/p3.jxl"))
        #expect(profiled.primaries == nil && profiled.transfer == nil)
    }

    @Test("TIFF: BitsPerSample, inline or pointed to")
    func tiff() throws {
        #expect(try Self.color("tiff/grey-16.tiff")?.bitDepth == 16)
        #expect(try Self.color("tiff/grey-12.tiff")?.bitDepth == 12)
        #expect(try Self.color("tiff/cmyk-16.tiff")?.bitDepth == 16, "four values: an offset to them")
        #expect(try Self.color("tiff/rgb-lzw.tiff")?.bitDepth == 8)
    }
}
