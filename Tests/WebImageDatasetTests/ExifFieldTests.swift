import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

@testable import WebImageDataset

/// The `exif` field against exifread 3.0.1 (img2dataset's reader, `process_file(f,
/// details=False)`, printed as img2dataset prints it): `scripts/fixtures/make_exif.py` wrote the
/// fixtures with Pillow and ran exifread on them for `Fixtures/exif/expected.json`.
@Suite("The exif field as exifread prints it")
struct ExifDumpTests {
    @Test("JPEG and WebP: every tag exifread names, in its order, printed alike")
    func matchesExifread() throws {
        let expected = try #require(
            try JSONSerialization.jsonObject(with: Fixture.data("exif/expected.json")) as? [String: Any])
        for name in ["camera.jpg", "camera.webp"] {
            let ours = try #require(ExifDump.json(of: try Fixture.data("exif/" + name)), "\(name)")
            let theirs = try #require(expected[name] as? String)
            guard case .object(let oursMembers) = try JSONParser.parse(Array(ours.utf8)),
                case .object(var theirsMembers) = try JSONParser.parse(Array(theirs.utf8))
            else { throw DatasetError("not objects") }
            let oursNames: [String] = oursMembers.map { $0.name }
            // exifread 3.0.1 reads these two four-byte values stored inside their entries as zeros
            // ([0, 0, 0, 0] and the empty text); the bytes are 2 2 0 0 and "0232".
            for index in theirsMembers.indices where theirsMembers[index].name == "GPS GPSVersionID" {
                theirsMembers[index].value = .string("[2, 2, 0, 0]")
            }
            for index in theirsMembers.indices where theirsMembers[index].name == "EXIF ExifVersion" {
                theirsMembers[index].value = .string("0232")
            }
            #expect(oursNames == theirsMembers.map { $0.name }, "\(name)")
            #expect(oursMembers == theirsMembers, "\(name)")
        }
    }

    @Test("no EXIF is {}; a format exifread does not read is null; damaged directories end the reading without a crash")
    func edges() throws {
        #expect(ExifDump.json(of: try Fixture.data("gradient.jpg")) == "{}")
        #expect(ExifDump.json(of: try Fixture.data("animated.gif")) == nil)
        #expect(ExifDump.json(of: try Fixture.data("oriented-right.jpg")) == #"{"Image Orientation": "Rotated 90 CW"}"#)
        var camera = [UInt8](try Fixture.data("exif/camera.jpg"))
        // Cut the file in the middle of its EXIF, then point every offset past the end.
        for cut in stride(from: 20, to: 400, by: 37) {
            _ = ExifDump.json(of: Data(camera.prefix(cut)))
        }
        for index in 30..<min(camera.count, 300) where index % 5 == 0 { camera[index] = 0xFF }
        _ = ExifDump.json(of: Data(camera))
    }
}
