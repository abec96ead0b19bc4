import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// HEIC through libheif (issue 17): heif-enc's and pillow-heif's files (a grid, an irot) beside
/// pillow-heif's reading, the embedded thumbnail used for a small request, the colour profile,
/// encoding read back, and damaged copies failing cleanly.
@Suite("HEIF")
struct HEIFCoderTests {
    static let manifest: [String: RGBAExpectation] = Fixture.manifest("heif")

    @Test(arguments: manifest.keys.sorted())
    func decodesLikePillowHeif(name: String) throws {
        let expected = try #require(Self.manifest[name])
        let image = try CodersManager.shared.decode(try Fixture.data("heif/" + name))
        #expect(image.sourceFormat == .heic && image.pixelWidth == expected.width && image.pixelHeight == expected.height)
        let difference = CorpusTests.maximumDifference(image.pixels.bytes, expected.rgba)
        // pillow-heif bundles libheif 1.23 and its own libde265: YCbCr to RGB rounds differently.
        #expect(difference <= 3, "\(name): max channel difference \(difference)")
        #expect(image.hasAlpha == name.contains("alpha"), "\(name)")
        let header = try ImageHeader(data: try Fixture.data("heif/" + name))
        #expect(header.format == .heic && header.width == expected.width && header.height == expected.height)
    }

    @Test("a thumbnail request small enough is answered from the file's own thumbnail")
    func embeddedThumbnail() throws {
        let data = try Fixture.data("heif/photo.heic")
        let small = try CodersManager.shared.decode(data, options: DecodeOptions(thumbnail: ThumbnailSize(width: 16, height: 10)))
        #expect(small.pixelWidth == 16, "the 16 px thumbnail, not the 48 px image resampled")
        // Over the pixel limit whole, but the thumbnail fits it.
        let limited = DecodeOptions(limits: DecodeLimits(maximumPixelCount: 600), thumbnail: ThumbnailSize(width: 16, height: 10))
        #expect(try CodersManager.shared.decode(data, options: limited).pixelWidth == 16)
        #expect(throws: WebImageError(.tooLarge)) {
            try CodersManager.shared.decode(data, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: 600)))
        }
    }

    @Test("encoding through x265 keeps size, alpha and the profile, and colour within 4:2:0's error")
    func encodesAndReadsBack() throws {
        #expect(HEIFCoder().canEncode(to: .heic) && !HEIFCoder().canEncode(to: .heif))
        for name in ["photo.heic", "alpha.heic"] {
            let original = try CodersManager.shared.decode(try Fixture.data("heif/" + name))
            let encoded = try CodersManager.shared.encode(original, as: .heic, options: EncodeOptions(quality: 0.95))
            #expect(ImageFormat(sniffing: encoded) == .heic)
            let decoded = try CodersManager.shared.decode(encoded)
            #expect(decoded.pixelWidth == original.pixelWidth && decoded.hasAlpha == original.hasAlpha, "\(name)")
            let differences = zip(decoded.pixels.bytes, original.pixels.bytes).map { abs(Int($0) - Int($1)) }
            #expect(differences.reduce(0, +) / differences.count <= 3, "\(name): mean difference")
        }
        var profiled = try CodersManager.shared.decode(try Fixture.data("heif/photo.heic"))
        profiled.colorProfile = try Fixture.data("color/display-p3.icc")
        let encoded = try CodersManager.shared.encode(profiled, as: .heic)
        let kept = try CodersManager.shared.decode(encoded, options: DecodeOptions(keepsColorProfile: true))
        #expect(kept.colorProfile == profiled.colorProfile)
        let converted = try CodersManager.shared.decode(encoded)
        #expect(converted.colorProfile == nil && CorpusTests.maximumDifference(converted.pixels.bytes, kept.pixels.bytes) > 10)
    }

    @Test("a file whose HEVC stream declares a picture larger than its container says is refused before decoding")
    func oversizedStream() throws {
        let data = try Fixture.data("heif/oversized-stream.heic")
        #expect(try ImageHeader(data: data).width == 64, "the container says 64x64")
        let limits = DecodeLimits(maximumPixelCount: 100_000)
        #expect {
            try CodersManager.shared.decode(data, options: DecodeOptions(limits: limits))
        } throws: { error in
            (error as? WebImageError)?.code == .tooLarge && "\(error)".contains("declare 1048576 pixels")
        }
        // Found by FuzzHEIF: 2 KB whose grid says 13568x8192 for a 48x32 image; libheif filled it
        // for 33 s in 1.5 GB. libheif now refuses any image with a side over the primary's.
        let fuzzed = DecodeOptions(limits: DecodeLimits(maximumPixelCount: 4_000_000, maximumInputSize: 1 << 20))
        #expect(throws: WebImageError(.tooLarge)) { try HEIFCoder().decode(try Fixture.data("heif/fuzz-slow.heic"), options: fuzzed) }
        // The fixtures' own streams are within it: photo.heic's 48x32 picture and 16 px thumbnail.
        let photo = DecodeOptions(limits: DecodeLimits(maximumPixelCount: 48 * 32))
        #expect(try CodersManager.shared.decode(try Fixture.data("heif/photo.heic"), options: photo).pixelWidth == 48)
    }

    @Test("a clean aperture over libheif's side limit is refused before libheif places grid tiles by it")
    func oversizedCleanAperture() throws {
        // grid.heic with 8 bytes changed (seed 1892 of the damaged-copy search): the tiles' clap
        // says 1140850720/1 wide, so libheif 1.15's parallel tile decoder placed the third tile at a
        // negative offset and wrote there (SEGV in memmove, found in session 20 with an ASan harness
        // over libheif alone).
        let data = try Fixture.data("heif/clap-overflow.heic")
        #expect {
            try CodersManager.shared.decode(data)
        } throws: { error in
            (error as? WebImageError)?.code == .decodeFailed && "\(error)".contains("clean aperture (clap)")
        }
        #expect(throws: WebImageError(.decodeFailed)) { try ImageHeader(data: data) }
        // The same box within the limit (the fixture's own 32/1 aperture) still decodes.
        #expect(try CodersManager.shared.decode(try Fixture.data("heif/grid.heic")).pixelWidth == 96)
    }

    @Test func damagedFiles() throws {
        for name in Self.manifest.keys.sorted() {
            let data = try Fixture.data("heif/" + name)
            let prefixes = stride(from: 0, to: data.count, by: max(1, data.count / 40)).underestimatedCount
            #expect(DamagedCopies.decode(data, cuts: 40, garbles: 40, bytes: 6) == prefixes, "\(name): every prefix fails")
        }
    }
}
