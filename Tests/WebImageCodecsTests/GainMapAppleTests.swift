import Foundation
import Testing
@testable import WebImageCodecs
import WebImageTestSupport

/// Apple's gain maps in iPhone JPEGs (``GainMapApple``), on libavif's test files (`tests/data` at
/// libavif 092276ce, BSD-2-Clause): apple_gainmap_old.jpg, whose headroom is in its EXIF's maker
/// note, and apple_gainmap_new.jpg, the same with the XMP of a newer iPhone, which states it. The
/// expected values are libavif's `JpegTest.ReadAppleJpegWithGainMap` (avifjpeggainmaptest.cc):
/// gains from 0 to the headroom, gamma 1, offsets 0, headrooms 0 and 3.0 (old) or log2(4.532783).
@Suite("HDR: Apple's gain maps in iPhone JPEGs")
struct GainMapAppleTests {
    static func fixture(_ name: String) throws -> Data { try Fixture.data("gain-map/libavif/\(name).jpg") }

    @Test("the gain map and its headroom, from the XMP (new) or the maker note (old), as libavif reads them")
    func headrooms() throws {
        for (name, headroom) in [("apple_gainmap_old", 3.0), ("apple_gainmap_new", log2(4.532783))] {
            let image = try CodersManager.shared.decode(try Self.fixture(name))
            let description = try #require(image.sourceColor, "\(name)")
            #expect(description.hasGainMap, "\(name)")
            let metadata = try #require(description.gainMap, "\(name)")
            #expect(metadata.gainMapMin == [0] && metadata.gamma == [1] && metadata.offsetSDR == [0] && metadata.offsetHDR == [0])
            #expect(metadata.gainMapMax.count == 1 && abs(metadata.gainMapMax[0] - headroom) < 1e-9, "\(name): \(metadata.gainMapMax)")
            #expect(metadata.hdrCapacityMin == 0 && abs(metadata.hdrCapacityMax - headroom) < 1e-9 && !metadata.baseRenditionIsHDR)
        }
    }

    @Test("found through the Multi-Picture index: without it, or with its entries garbled (all bytes 0xFF), no gain map")
    func throughTheIndex() throws {
        let original = [UInt8](try Self.fixture("apple_gainmap_new"))
        let index = try #require((0..<(original.count - 4)).first { Array(original[$0..<($0 + 4)]) == MultiPictureIndex.signature })
        var unlisted = original
        unlisted.replaceSubrange(index..<(index + 3), with: Array("XYZ".utf8))
        #expect(try CodersManager.shared.decode(Data(unlisted)).sourceColor?.hasGainMap == false)
        // Every byte of the index after its TIFF header set to 0xFF.
        var outside = original
        let segmentLength = Int(original[index - 2]) << 8 | Int(original[index - 1])
        for offset in (index + 16)..<(index - 2 + segmentLength) { outside[offset] = 0xFF }
        #expect(try CodersManager.shared.decode(Data(outside)).sourceColor?.hasGainMap == false)
        #expect(try CodersManager.shared.decode(Data(original)).sourceColor?.hasGainMap == true)
    }

    @Test("cut at every length and garbled: the metadata reads or not, never a crash")
    func damaged() throws {
        let original = [UInt8](try Self.fixture("apple_gainmap_old"))
        // The primary's metadata (EXIF with the maker note, the index) lies in its first 2 KB.
        DamagedCopies.parse(original, cutStep: 97, rounds: 3000, changes: 3, within: 2..<2002) {
            _ = SourceMetadata(container: $0, format: .jpeg)
        }
    }
}
