import Foundation
import Testing
import WebImage
import WebImageTesting

@testable import webimage
@testable import WebImageDataset
import WebImageServer
import WebImageTestSupport

/// img2dataset's resizer arithmetic (its `resizer.py` with albumentations 1.4.24, the version
/// img2dataset 1.47 installs: `SmallestMaxSize`/`LongestMaxSize` scale each side by
/// `max(1, round(side * scale))` with Python's half-to-even `round`; `CenterCrop` starts at
/// `(side - crop) // 2`; `PadIfNeeded` puts `int((size - side) / 2.0)` before and the rest after).
@Suite("prefetch --resize-mode as img2dataset computes it")
struct DatasetResizeTests {
    private func plan(_ mode: DatasetResizeMode, _ width: Int, _ height: Int, size: Int = 256, onlyIfBigger: Bool = false)
        -> DatasetResizePlan
    {
        DatasetResizer(imageSize: size, mode: mode, onlyIfBigger: onlyIfBigger).plan(width: width, height: height)
    }

    @Test("keep_ratio and center_crop fix the shorter side; keep_ratio_largest and border the longer")
    func modes() {
        // 1024x768 to 256: scale 1/3 on the shorter side: 341.33 -> 341; 768/4 on the longer.
        #expect(plan(.keepRatio, 1024, 768) == DatasetResizePlan(scaled: (341, 256), downscale: true))
        #expect(plan(.centerCrop, 1024, 768) == DatasetResizePlan(scaled: (341, 256), crop: (42, 0, 256, 256), downscale: true))
        #expect(plan(.keepRatioLargest, 1024, 768) == DatasetResizePlan(scaled: (256, 192), downscale: true))
        #expect(plan(.border, 1024, 768) == DatasetResizePlan(scaled: (256, 192), pad: (256, 256, 0, 32), downscale: true))
        #expect(plan(.no, 1024, 768) == DatasetResizePlan())
        // A portrait image: the crop is vertical, the padding horizontal; odd padding goes after.
        #expect(plan(.centerCrop, 300, 457) == DatasetResizePlan(scaled: (256, 390), crop: (0, 67, 256, 256), downscale: true))
        #expect(plan(.border, 300, 457) == DatasetResizePlan(scaled: (168, 256), pad: (256, 256, 44, 0), downscale: true))
    }

    @Test("halves round to even, as Python's round does; a side never reaches 0")
    func rounding() {
        // 10 x 1.25 = 12.5 rounds to 12, the even neighbour.
        #expect(DatasetResizer.scaled(width: 10, height: 4, by: 1.25) == (12, 5))
        #expect(DatasetResizer.scaled(width: 14, height: 4, by: 1.25) == (18, 5), "17.5 rounds to 18")
        #expect(DatasetResizer.scaled(width: 2000, height: 1, by: 0.1) == (200, 1), "0.1 rounds to 0 and is raised to 1")
        #expect(plan(.keepRatioLargest, 5000, 3, size: 100) == DatasetResizePlan(scaled: (100, 1), downscale: true))
    }

    @Test("smaller images are enlarged unless --resize-only-if-bigger, which leaves them as they are")
    func enlarging() {
        #expect(plan(.keepRatio, 64, 48) == DatasetResizePlan(scaled: (341, 256), downscale: false))
        #expect(plan(.keepRatio, 64, 48, onlyIfBigger: true) == DatasetResizePlan())
        #expect(plan(.border, 64, 48, onlyIfBigger: true) == DatasetResizePlan(), "no padding either: img2dataset pads only after a resize")
        #expect(plan(.centerCrop, 300, 200, onlyIfBigger: true) == DatasetResizePlan(), "the shorter side, 200, is not over 256")
        #expect(
            plan(.centerCrop, 600, 400, onlyIfBigger: true)
                == DatasetResizePlan(scaled: (384, 256), crop: (64, 0, 256, 256), downscale: true))
    }

    @Test("the filters, in img2dataset's order and words")
    func filters() {
        let resizer = DatasetResizer(minimumImageSize: 100, maximumImageArea: 60_000, maximumAspectRatio: 1.5)
        #expect(resizer.refusal(width: 99, height: 400)?.description == "image too small")
        #expect(resizer.refusal(width: 300, height: 201)?.description == "image area too large")
        #expect(resizer.refusal(width: 160, height: 100)?.description == "aspect ratio too large")
        #expect(resizer.refusal(width: 150, height: 100) == nil)
    }
}

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
