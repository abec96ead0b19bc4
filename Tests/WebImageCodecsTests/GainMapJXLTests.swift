import Foundation
import Testing
@testable import WebImageCodecs
import WebImageTesting
import WebImageTestSupport

/// A JPEG XL's ISO 21496-1 gain map (``GainMapJXL``), in files jxl_gain_map.py writes with cjxl:
/// the `jhgm` box laid out as libjxl's `JxlGainMapWriteBundle` writes it (lib/extras/gain_map.cc),
/// its metadata the values of libavif's test (GainMapHEIFTests.libavifMetadata says which), in
/// the bytes libavif's own file holds them.
@Suite("HDR: ISO 21496-1 gain maps of JPEG XL files, read from the jhgm box")
struct GainMapJXLTests {
    /// jxl_gain_map.py's files, by name, written for the test that asks.
    static func files() async throws -> [String: Data] {
        let directory = try TemporaryDirectory("jxl-gain-map")
        let script = try #require(Bundle.module.url(forResource: "jxl_gain_map", withExtension: "py"))
        let python = TestPython.command
        let process = try ChildProcess(python.executable, python.arguments + [script.path, directory.url.path])
        let status = try await process.waitForExit()
        try #require(status.status == 0, "jxl_gain_map.py (Pillow, cjxl?): \(process.lines.suffix(5))")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        return try Dictionary(uniqueKeysWithValues: names.map { ($0, try Data(contentsOf: directory.url.appendingPathComponent($0))) })
    }

    @Test("the metadata in the jhgm box is the bytes libavif writes after its tmap item's version byte")
    func metadataIsLibavifs() async throws {
        let iso = [UInt8](try #require(try await Self.files()["iso.bin"]))
        let avif = [UInt8](try Fixture.data("gain-map/libavif/color_nogrid_alpha_nogrid_gainmap_grid.avif"))
        let pattern = [0] + iso
        #expect((0...(avif.count - pattern.count)).contains { Array(avif[$0..<($0 + pattern.count)]) == pattern })
    }

    @Test("a jhgm box before or after the codestream: the gain map and its three channels' values, on an HDR base and an SDR one")
    func gainMap() async throws {
        let files = try await Self.files()
        for name in ["gain-map.jxl", "after-codestream.jxl"] {
            let data = try #require(files[name])
            let image = try CodersManager.shared.decode(data)
            #expect(image.sourceFormat == .jpegXL && image.sourceColor?.hasGainMap == true, "\(name)")
            GainMapHEIFTests.expectClose(image.sourceColor?.gainMap, GainMapHEIFTests.libavifMetadata, "\(name)")
            #expect(image.sourceColor?.isHDR == (name == "gain-map.jxl"), "\(name): PQ base or sRGB base")
            var keep = DecodeOptions()
            keep.keepsHighBitDepth = true
            let kept = try CodersManager.shared.decode(data, options: keep)
            GainMapHEIFTests.expectClose(kept.sourceColor?.gainMap, GainMapHEIFTests.libavifMetadata, "\(name), kept")
        }
    }

    @Test(
        "no container, another bundle version or a minimum version above 0: no gain map; a bundle cut short or without an image: one without values"
    )
    func conditions() async throws {
        let files = try await Self.files()
        for name in ["bare.jxl", "version-1.jxl", "minimum-version-1.jxl"] {
            let image = try CodersManager.shared.decode(try #require(files[name]))
            #expect(image.sourceColor?.hasGainMap == false, "\(name)")
        }
        for name in ["cut-bundle.jxl", "no-image.jxl"] {
            let image = try CodersManager.shared.decode(try #require(files[name]))
            #expect(image.sourceColor?.hasGainMap == true && image.sourceColor?.gainMap == nil, "\(name)")
        }
    }

    @Test("cut and garbled containers: never a crash, and a gain map only where the box still reads")
    func damaged() async throws {
        let original = [UInt8](try #require(try await Self.files()["gain-map.jxl"]))
        // Every prefix; four bytes changed at a time over the boxes before the codestream.
        DamagedCopies.parse(original, cutStep: 1, rounds: 2000, changes: 4, within: 0..<260) { _ = GainMapJXL.find(in: $0) }
        DamagedCopies.decode(Data(original), cuts: 40, garbles: 200, bytes: 3)
        #expect(original.withUnsafeBytes { GainMapJXL.find(in: $0) }?.metadata != nil)
    }
}
