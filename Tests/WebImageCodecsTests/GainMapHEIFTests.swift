import Foundation
import Testing
@testable import WebImageCodecs
import WebImageTesting
import WebImageTestSupport

/// ISO 21496-1 gain maps in AVIF and HEIF (``GainMapHEIF``), on libavif's own test files
/// (`tests/data` at libavif 092276ce, BSD-2-Clause, copied into `Fixtures/gain-map/libavif`). Their
/// README says how each was made, and `tests/gtest/avifgainmaptest.cc` what libavif reads from
/// each: the values below come from there.
@Suite("HDR: ISO 21496-1 gain maps of AVIF and HEIF files, read from the container")
struct GainMapHEIFTests {
    static func fixture(_ name: String) throws -> Data { try Fixture.data("gain-map/libavif/\(name).avif") }

    /// `FillTestGainMapMetadata(base_rendition_is_hdr: true)` (avifgainmaptest.cc), which made
    /// color_nogrid_alpha_nogrid_gainmap_grid.avif (its test reads base headroom 6/2): base
    /// headroom 6/2, alternate 0/1; for channel c, base offset 10c/1000, alternate offset
    /// 20c/1000, gamma 1/(c+1), minimum -1/(c+1), maximum (11+c)/(c+1). The base is HDR, so in
    /// `hdrgm`'s SDR-to-HDR terms the minimum is the negated maximum and the maximum the negated
    /// minimum, the SDR offset the alternate's and the HDR offset the base's.
    static let libavifMetadata = GainMapMetadata(
        gainMapMin: [-11, -6, -13.0 / 3], gainMapMax: [1, 0.5, 1.0 / 3], gamma: [1, 0.5, 1.0 / 3], offsetSDR: [0, 0.02, 0.04],
        offsetHDR: [0, 0.01, 0.02], hdrCapacityMin: 0, hdrCapacityMax: 3, baseRenditionIsHDR: true)

    static func expectClose(_ found: GainMapMetadata?, _ expected: GainMapMetadata, _ comment: Comment) {
        guard let found else {
            Issue.record("no gain map values: \(comment)")
            return
        }
        let pairs = [
            (found.gainMapMin, expected.gainMapMin), (found.gainMapMax, expected.gainMapMax), (found.gamma, expected.gamma),
            (found.offsetSDR, expected.offsetSDR), (found.offsetHDR, expected.offsetHDR),
            ([found.hdrCapacityMin, found.hdrCapacityMax], [expected.hdrCapacityMin, expected.hdrCapacityMax]),
        ]
        for (values, wanted) in pairs {
            #expect(
                values.count == wanted.count && zip(values, wanted).allSatisfy { abs($0 - $1) < 1e-12 }, "\(values) \(wanted): \(comment)")
        }
        #expect(found.baseRenditionIsHDR == expected.baseRenditionIsHDR, comment)
    }

    @Test("libavif's file with a tmap item: the gain map and its three channels' values, as libavif reads them")
    func avif() throws {
        let image = try CodersManager.shared.decode(try Self.fixture("color_nogrid_alpha_nogrid_gainmap_grid"))
        #expect(image.sourceColor?.hasGainMap == true)
        Self.expectClose(image.sourceColor?.gainMap, Self.libavifMetadata, "decoded")
        #expect(image.pixelWidth == 128 && image.pixelHeight == 200, "the base image is what is decoded")
        var keeping = DecodeOptions()
        keeping.keepsHighBitDepth = true
        let kept = try CodersManager.shared.decode(try Self.fixture("color_nogrid_alpha_nogrid_gainmap_grid"), options: keeping)
        Self.expectClose(kept.sourceColor?.gainMap, Self.libavifMetadata, "kept at 16 bits")
    }

    @Test("the same items in a HEIF (the AVIF's brands made mif1): libheif decodes it, the gain map is read as from the AVIF")
    func heif() throws {
        var bytes = [UInt8](try Self.fixture("color_nogrid_alpha_nogrid_gainmap_grid"))
        // ftyp: major brand at 8, compatible brands from 16; the file's first compatible brand is avif.
        #expect(Array(bytes[8..<12]) == Array("avif".utf8) && Array(bytes[16..<20]) == Array("avif".utf8))
        bytes.replaceSubrange(8..<12, with: Array("mif1".utf8))
        bytes.replaceSubrange(16..<20, with: Array("miaf".utf8))
        #expect(ImageFormat(sniffing: Data(bytes)) == .heif)
        let image = try CodersManager.shared.decode(Data(bytes))
        #expect(image.sourceColor?.hasGainMap == true)
        Self.expectClose(image.sourceColor?.gainMap, Self.libavifMetadata, "HEIF")
    }

    @Test("an iPhone HEIC's Apple gain map: its headroom from the maker note of the EXIF item, or the gain map's XMP item")
    func appleHEICHeadroom() async throws {
        // apple_heic.py: pillow-heif's HEIC with apple_gainmap_old.jpg's EXIF, its alpha plane
        // given Apple's gain map type; the second with an XMP item stating apple_gainmap_new.jpg's
        // headroom. The expected values are libavif's for those two JPEGs (GainMapAppleTests).
        let directory = try TemporaryDirectory("apple-heic")
        let (old, new) = (directory.url.appendingPathComponent("old.heic"), directory.url.appendingPathComponent("new.heic"))
        let script = try #require(Bundle.module.url(forResource: "apple_heic", withExtension: "py"))
        let python = TestPython.command
        let jpeg = Fixture.url("gain-map/libavif/apple_gainmap_old.jpg")
        let process = try ChildProcess(python.executable, python.arguments + [script.path, jpeg.path, old.path, new.path])
        let status = try await process.waitForExit()
        try #require(status.status == 0, "apple_heic.py (pillow-heif?): \(process.lines.suffix(5))")
        for (file, headroom) in [(old, 3.0), (new, log2(4.532783))] {
            let image = try CodersManager.shared.decode(try Data(contentsOf: file))
            #expect(image.sourceFormat == .heic && image.sourceColor?.hasGainMap == true, "\(file.lastPathComponent)")
            let metadata = try #require(image.sourceColor?.gainMap, "\(file.lastPathComponent)")
            #expect(metadata == GainMapApple.metadata(headroom: metadata.hdrCapacityMax))
            #expect(abs(metadata.hdrCapacityMax - headroom) < 1e-9, "\(file.lastPathComponent): \(metadata.hdrCapacityMax)")
        }
    }

    @Test("an Apple gain map without an EXIF or XMP item: reported, without values")
    func appleHEIC() throws {
        var bytes = [UInt8](try Self.fixture("color_nogrid_alpha_nogrid_gainmap_grid"))
        // A HEIC without the tmap brand, whose auxiliary image (the alpha plane, auxl to the
        // primary) is given Apple's gain map type: the URN, its zero, then 4 bytes of aux_subtype,
        // so that the auxC box keeps its size (ISO/IEC 23008-12, 6.5.8).
        for (offset, brand) in [(8, "heic"), (16, "miaf")] { bytes.replaceSubrange(offset..<(offset + 4), with: Array(brand.utf8)) }
        let brand = try #require(Self.offset(of: "tmap", in: bytes, before: 36))
        bytes.replaceSubrange(brand..<(brand + 4), with: Array("mif1".utf8))
        #expect(ImageFormat(sniffing: Data(bytes)) == .heic)
        #expect(try CodersManager.shared.decode(Data(bytes)).sourceColor?.hasGainMap == false, "an alpha plane is no gain map")
        let alpha = Array("urn:mpeg:mpegB:cicp:systems:auxiliary:alpha".utf8) + [0]
        let urn = try #require((0..<(bytes.count - alpha.count)).first { Array(bytes[$0..<($0 + alpha.count)]) == alpha })
        bytes.replaceSubrange(urn..<(urn + alpha.count), with: GainMapApple.auxiliaryType + [0, 0, 0, 0, 0])
        let image = try CodersManager.shared.decode(Data(bytes))
        #expect(image.sourceColor?.hasGainMap == true && image.sourceColor?.gainMap == nil)
        #expect(image.pixelWidth == 128 && image.pixelHeight == 200)
    }

    @Test("versions and conditions as libavif's tests take them: unknown versions, extra bytes, no tmap brand, the altr order")
    func conditions() throws {
        // DecodeUnsupportedVersion: the box's version 99, or the metadata's minimum version: no gain map.
        for name in ["unsupported_gainmap_version", "unsupported_gainmap_minimum_version"] {
            #expect(try CodersManager.shared.decode(try Self.fixture(name)).sourceColor?.hasGainMap == false, "\(name)")
        }
        // ExtraBytesAfterGainMapMetadataUnsupportedWriterVersion: a later writer may add fields.
        let later = try CodersManager.shared.decode(try Self.fixture("unsupported_gainmap_writer_version_with_extra_bytes"))
        #expect(later.sourceColor?.gainMap != nil)
        // ...SupporterWriterVersion: writer version 0 has no more fields, so the metadata is
        // invalid (libavif refuses the file; here the picture is read, the gain map has no values).
        let invalid = try CodersManager.shared.decode(try Self.fixture("supported_gainmap_writer_version_with_extra_bytes"))
        #expect(invalid.sourceColor?.hasGainMap == true && invalid.sourceColor?.gainMap == nil)
        let original = [UInt8](try Self.fixture("color_nogrid_alpha_nogrid_gainmap_grid"))
        // seine_sdr_gainmap_notmapbrand.avif's case: the tmap brand gone from ftyp.
        var noBrand = original
        let brand = try #require(Self.offset(of: "tmap", in: original, before: 36))
        noBrand.replaceSubrange(brand..<(brand + 4), with: Array("miaf".utf8))
        #expect(try CodersManager.shared.decode(Data(noBrand)).sourceColor?.hasGainMap == false, "no tmap brand")
        // seine_hdr_gainmap_wrongaltr.avif's case: the altr group's two entity IDs swapped, so the
        // primary image is preferred to the tone-mapped one.
        var swapped = original
        let altr = try #require(Self.offset(of: "altr", in: original, before: original.count))
        let entities = altr + 4 + 4 + 4 + 4
        let first = Array(original[entities..<(entities + 4)])
        swapped.replaceSubrange(entities..<(entities + 4), with: original[(entities + 4)..<(entities + 8)])
        swapped.replaceSubrange((entities + 4)..<(entities + 8), with: first)
        #expect(try CodersManager.shared.decode(Data(swapped)).sourceColor?.hasGainMap == false, "altr prefers the primary")
        #expect(try CodersManager.shared.decode(Data(original)).sourceColor?.hasGainMap == true)
    }

    @Test("cut and garbled containers: never a crash, and a gain map only where the tmap item still reads")
    func damaged() throws {
        let original = [UInt8](try Self.fixture("color_nogrid_alpha_nogrid_gainmap_grid"))
        // Four bytes changed at a time over the whole meta box.
        DamagedCopies.parse(original, cutStep: 7, rounds: 2000, changes: 4, within: 0..<900) { _ = GainMapHEIF.find(in: $0) }
        // The box sizes in the meta box made huge: the boxes end there, no gain map.
        var huge = original
        let iloc = try #require(Self.offset(of: "iloc", in: original, before: original.count))
        huge.replaceSubrange((iloc - 4)..<iloc, with: [0x7F, 0xFF, 0xFF, 0xFF])
        #expect(huge.withUnsafeBytes { GainMapHEIF.find(in: $0) } == nil)
        #expect(original.withUnsafeBytes { GainMapHEIF.find(in: $0) } != nil)
    }

    /// Where `type` first occurs in `bytes` before `end`.
    static func offset(of type: String, in bytes: [UInt8], before end: Int) -> Int? {
        let pattern = Array(type.utf8)
        return (0..<(end - 3)).first { Array(bytes[$0..<($0 + 4)]) == pattern }
    }
}
