import Foundation
import Testing
import WebImage
import WebImageTesting

@testable import webimage
@testable import WebImageDataset
import WebImageServer
import WebImageTestSupport

/// The `exif` field against exifread 3.0.1 (img2dataset's reader, `process_file(f,
/// details=False)`, printed as img2dataset prints it): `scripts/fixtures/make_exif.py` wrote the
/// fixtures with Pillow and ran exifread on them for `Fixtures/exif/expected.json`.
@Suite("prefetch's exif field as exifread prints it")
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
            else { throw CommandFailure("not objects") }
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

/// img2dataset's command line (Python Fire's spellings, as its README and dataset examples write
/// them) translated for `prefetch`.
@Suite("img2dataset command lines on prefetch")
struct Img2datasetArgumentsTests {
    @Test("names with underscores, =values, Fire's booleans, Python lists; img2dataset-only options dropped with a warning")
    func translation() {
        // From img2dataset's dataset_examples/cc3m.md, with a few more of its options.
        let command = [
            "--url_list", "cc3m.tsv", "--input_format", "tsv", "--url_col", "url", "--caption_col", "caption", "--output_format",
            "webdataset", "--output_folder", "cc3m", "--processes_count", "16", "--thread_count", "64", "--image_size=256",
            "--enable_wandb", "True", "--resize_only_if_bigger=True", "--skip_reencode", "--extract_exif", "False",
            "--save_additional_columns", #"["license", 'source']"#, "--disallowed_header_directives", "[]", "--timeout=10", "-j", "8",
        ]
        let (arguments, warnings) = Img2datasetArguments.translate(command)
        #expect(
            arguments == [
                "--input", "cc3m.tsv", "--input-format", "tsv", "--url-col", "url", "--caption-col", "caption", "--output-format",
                "webdataset", "--output", "cc3m", "-j", "64", "--image-size", "256", "--resize-only-if-bigger", "--skip-reencode",
                "--no-extract-exif", "--save-additional-columns", "license,source", "--disallowed-header-directives", "",
                "--timeout=10", "-j", "8",
            ])
        #expect(warnings.count == 2 && warnings.allSatisfy { $0.contains("img2dataset's and has no effect here") })
        #expect(
            Img2datasetArguments.translate(["--url_list=a.txt", "--output_folder=out"]).arguments == [
                "--input", "a.txt", "--output", "out", "--output-format", "files",
            ], "img2dataset's default layout is files")
        #expect(
            Img2datasetArguments.translate(["--url_list", #"["a.csv", 'b.csv']"#]).arguments == ["--input", "a.csv", "--input", "b.csv"],
            "a list of files: one --input each")
    }
}
