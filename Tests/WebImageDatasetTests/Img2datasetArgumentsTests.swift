import Testing

@testable import WebImageDataset

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
