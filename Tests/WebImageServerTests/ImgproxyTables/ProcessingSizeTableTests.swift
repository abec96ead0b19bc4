import Testing
@testable import WebImageServer

/// imgproxy's own result-size tables, as ours: `processing/processing_test.go` at imgproxy
/// v4 (eef3b312), each `Test*` function's cases with its resizing type, `enlarge`, `extend`,
/// `extend_aspect_ratio`, `max_result_dimension`, `rotate` and `padding`, processed from its
/// `testdata/geometry.png`, a 200x100 image. The expected sizes are imgproxy's; the rows run
/// through our parser and ``ProcessingPlan`` (the sizes every transformer then makes), so a
/// divergence from imgproxy's arithmetic (`processing/prepare.go`: `calcScale`, `calcSizes`,
/// `limitScale`) fails a row here.
@Suite("imgproxy's tables: result sizes (processing/processing_test.go)")
struct ImgproxyProcessingSizeTableTests {
    struct Row: CustomTestStringConvertible, Sendable {
        /// The imgproxy test function the case comes from.
        var test: String
        var options: String
        var width: Int
        var height: Int
        init(_ test: String, _ options: String, _ width: Int, _ height: Int) {
            (self.test, self.options, self.width, self.height) = (test, options, width, height)
        }
        var testDescription: String { "\(test): \(options) -> \(width)x\(height)" }
    }

    static let rows: [Row] = [
        Row("TestResizeToFit", "rs:fit:50:50", 50, 25),
        Row("TestResizeToFit", "rs:fit:50:20", 40, 20),
        Row("TestResizeToFit", "rs:fit:20:50", 20, 10),
        Row("TestResizeToFit", "rs:fit:300:300", 200, 100),
        Row("TestResizeToFit", "rs:fit:300:50", 100, 50),
        Row("TestResizeToFit", "rs:fit:100:300", 100, 50),
        Row("TestResizeToFit", "rs:fit:0:50", 100, 50),
        Row("TestResizeToFit", "rs:fit:50:0", 50, 25),
        Row("TestResizeToFit", "rs:fit:0:200", 200, 100),
        Row("TestResizeToFit", "rs:fit:300:0", 200, 100),
        Row("TestResizeToFitEnlarge", "rs:fit:50:50/el:1", 50, 25),
        Row("TestResizeToFitEnlarge", "rs:fit:50:20/el:1", 40, 20),
        Row("TestResizeToFitEnlarge", "rs:fit:20:50/el:1", 20, 10),
        Row("TestResizeToFitEnlarge", "rs:fit:300:300/el:1", 300, 150),
        Row("TestResizeToFitEnlarge", "rs:fit:300:125/el:1", 250, 125),
        Row("TestResizeToFitEnlarge", "rs:fit:250:300/el:1", 250, 125),
        Row("TestResizeToFitEnlarge", "rs:fit:0:50/el:1", 100, 50),
        Row("TestResizeToFitEnlarge", "rs:fit:50:0/el:1", 50, 25),
        Row("TestResizeToFitEnlarge", "rs:fit:0:200/el:1", 400, 200),
        Row("TestResizeToFitEnlarge", "rs:fit:300:0/el:1", 300, 150),
        Row("TestResizeToFitExtend", "rs:fit:50:50/ex:1", 50, 50),
        Row("TestResizeToFitExtend", "rs:fit:50:20/ex:1", 50, 20),
        Row("TestResizeToFitExtend", "rs:fit:20:50/ex:1", 20, 50),
        Row("TestResizeToFitExtend", "rs:fit:300:300/ex:1", 300, 300),
        Row("TestResizeToFitExtend", "rs:fit:300:125/ex:1", 300, 125),
        Row("TestResizeToFitExtend", "rs:fit:250:300/ex:1", 250, 300),
        Row("TestResizeToFitExtend", "rs:fit:0:50/ex:1", 100, 50),
        Row("TestResizeToFitExtend", "rs:fit:50:0/ex:1", 50, 25),
        Row("TestResizeToFitExtend", "rs:fit:0:200/ex:1", 200, 200),
        Row("TestResizeToFitExtend", "rs:fit:300:0/ex:1", 300, 100),
        Row("TestResizeToFitExtendAR", "rs:fit:50:50/exar:1", 50, 50),
        Row("TestResizeToFitExtendAR", "rs:fit:50:20/exar:1", 50, 20),
        Row("TestResizeToFitExtendAR", "rs:fit:20:50/exar:1", 20, 50),
        Row("TestResizeToFitExtendAR", "rs:fit:300:300/exar:1", 200, 200),
        Row("TestResizeToFitExtendAR", "rs:fit:300:125/exar:1", 240, 100),
        Row("TestResizeToFitExtendAR", "rs:fit:250:500/exar:1", 200, 400),
        Row("TestResizeToFitExtendAR", "rs:fit:0:50/exar:1", 100, 50),
        Row("TestResizeToFitExtendAR", "rs:fit:50:0/exar:1", 50, 25),
        Row("TestResizeToFitExtendAR", "rs:fit:0:200/exar:1", 200, 100),
        Row("TestResizeToFitExtendAR", "rs:fit:300:0/exar:1", 200, 100),
        Row("TestResizeToFill", "rs:fill:50:50", 50, 50),
        Row("TestResizeToFill", "rs:fill:50:20", 50, 20),
        Row("TestResizeToFill", "rs:fill:20:50", 20, 50),
        Row("TestResizeToFill", "rs:fill:300:300", 200, 100),
        Row("TestResizeToFill", "rs:fill:300:50", 200, 50),
        Row("TestResizeToFill", "rs:fill:100:300", 100, 100),
        Row("TestResizeToFill", "rs:fill:0:50", 100, 50),
        Row("TestResizeToFill", "rs:fill:50:0", 50, 25),
        Row("TestResizeToFill", "rs:fill:0:200", 200, 100),
        Row("TestResizeToFill", "rs:fill:300:0", 200, 100),
        Row("TestResizeToFillEnlarge", "rs:fill:50:50/el:1", 50, 50),
        Row("TestResizeToFillEnlarge", "rs:fill:50:20/el:1", 50, 20),
        Row("TestResizeToFillEnlarge", "rs:fill:20:50/el:1", 20, 50),
        Row("TestResizeToFillEnlarge", "rs:fill:300:300/el:1", 300, 300),
        Row("TestResizeToFillEnlarge", "rs:fill:300:125/el:1", 300, 125),
        Row("TestResizeToFillEnlarge", "rs:fill:250:300/el:1", 250, 300),
        Row("TestResizeToFillEnlarge", "rs:fill:0:50/el:1", 100, 50),
        Row("TestResizeToFillEnlarge", "rs:fill:50:0/el:1", 50, 25),
        Row("TestResizeToFillEnlarge", "rs:fill:0:200/el:1", 400, 200),
        Row("TestResizeToFillEnlarge", "rs:fill:300:0/el:1", 300, 150),
        Row("TestResizeToFillExtend", "rs:fill:50:50/ex:1", 50, 50),
        Row("TestResizeToFillExtend", "rs:fill:50:20/ex:1", 50, 20),
        Row("TestResizeToFillExtend", "rs:fill:20:50/ex:1", 20, 50),
        Row("TestResizeToFillExtend", "rs:fill:300:300/ex:1", 300, 300),
        Row("TestResizeToFillExtend", "rs:fill:300:125/ex:1", 300, 125),
        Row("TestResizeToFillExtend", "rs:fill:250:300/ex:1", 250, 300),
        Row("TestResizeToFillExtend", "rs:fill:300:50/ex:1", 300, 50),
        Row("TestResizeToFillExtend", "rs:fill:100:300/ex:1", 100, 300),
        Row("TestResizeToFillExtend", "rs:fill:0:50/ex:1", 100, 50),
        Row("TestResizeToFillExtend", "rs:fill:50:0/ex:1", 50, 25),
        Row("TestResizeToFillExtend", "rs:fill:0:200/ex:1", 200, 200),
        Row("TestResizeToFillExtend", "rs:fill:300:0/ex:1", 300, 100),
        Row("TestResizeToFillExtendAR", "rs:fill:50:50/exar:1", 50, 50),
        Row("TestResizeToFillExtendAR", "rs:fill:50:20/exar:1", 50, 20),
        Row("TestResizeToFillExtendAR", "rs:fill:20:50/exar:1", 20, 50),
        Row("TestResizeToFillExtendAR", "rs:fill:300:300/exar:1", 200, 200),
        Row("TestResizeToFillExtendAR", "rs:fill:300:125/exar:1", 240, 100),
        Row("TestResizeToFillExtendAR", "rs:fill:250:500/exar:1", 200, 400),
        Row("TestResizeToFillExtendAR", "rs:fill:300:50/exar:1", 300, 50),
        Row("TestResizeToFillExtendAR", "rs:fill:100:300/exar:1", 100, 300),
        Row("TestResizeToFillExtendAR", "rs:fill:0:50/exar:1", 100, 50),
        Row("TestResizeToFillExtendAR", "rs:fill:50:0/exar:1", 50, 25),
        Row("TestResizeToFillExtendAR", "rs:fill:0:200/exar:1", 200, 100),
        Row("TestResizeToFillExtendAR", "rs:fill:300:0/exar:1", 200, 100),
        Row("TestResizeToFillDown", "rs:fill-down:50:50", 50, 50),
        Row("TestResizeToFillDown", "rs:fill-down:50:20", 50, 20),
        Row("TestResizeToFillDown", "rs:fill-down:20:50", 20, 50),
        Row("TestResizeToFillDown", "rs:fill-down:300:300", 100, 100),
        Row("TestResizeToFillDown", "rs:fill-down:300:125", 200, 83),
        Row("TestResizeToFillDown", "rs:fill-down:250:300", 83, 100),
        Row("TestResizeToFillDown", "rs:fill-down:0:50", 100, 50),
        Row("TestResizeToFillDown", "rs:fill-down:50:0", 50, 25),
        Row("TestResizeToFillDown", "rs:fill-down:0:200", 200, 100),
        Row("TestResizeToFillDown", "rs:fill-down:300:0", 200, 100),
        Row("TestResizeToFillDownEnlarge", "rs:fill-down:50:50/el:1", 50, 50),
        Row("TestResizeToFillDownEnlarge", "rs:fill-down:50:20/el:1", 50, 20),
        Row("TestResizeToFillDownEnlarge", "rs:fill-down:20:50/el:1", 20, 50),
        Row("TestResizeToFillDownEnlarge", "rs:fill-down:300:300/el:1", 300, 300),
        Row("TestResizeToFillDownEnlarge", "rs:fill-down:300:125/el:1", 300, 125),
        Row("TestResizeToFillDownEnlarge", "rs:fill-down:250:300/el:1", 250, 300),
        Row("TestResizeToFillDownEnlarge", "rs:fill-down:0:50/el:1", 100, 50),
        Row("TestResizeToFillDownEnlarge", "rs:fill-down:50:0/el:1", 50, 25),
        Row("TestResizeToFillDownEnlarge", "rs:fill-down:0:200/el:1", 400, 200),
        Row("TestResizeToFillDownEnlarge", "rs:fill-down:300:0/el:1", 300, 150),
        Row("TestResizeToFillDownExtend", "rs:fill-down:50:50/ex:1", 50, 50),
        Row("TestResizeToFillDownExtend", "rs:fill-down:50:20/ex:1", 50, 20),
        Row("TestResizeToFillDownExtend", "rs:fill-down:20:50/ex:1", 20, 50),
        Row("TestResizeToFillDownExtend", "rs:fill-down:300:300/ex:1", 300, 300),
        Row("TestResizeToFillDownExtend", "rs:fill-down:300:125/ex:1", 300, 125),
        Row("TestResizeToFillDownExtend", "rs:fill-down:250:300/ex:1", 250, 300),
        Row("TestResizeToFillDownExtend", "rs:fill-down:300:50/ex:1", 300, 50),
        Row("TestResizeToFillDownExtend", "rs:fill-down:100:300/ex:1", 100, 300),
        Row("TestResizeToFillDownExtend", "rs:fill-down:0:50/ex:1", 100, 50),
        Row("TestResizeToFillDownExtend", "rs:fill-down:50:0/ex:1", 50, 25),
        Row("TestResizeToFillDownExtend", "rs:fill-down:0:200/ex:1", 200, 200),
        Row("TestResizeToFillDownExtend", "rs:fill-down:300:0/ex:1", 300, 100),
        Row("TestResizeToFillDownExtendAR", "rs:fill-down:50:50/exar:1", 50, 50),
        Row("TestResizeToFillDownExtendAR", "rs:fill-down:50:20/exar:1", 50, 20),
        Row("TestResizeToFillDownExtendAR", "rs:fill-down:20:50/exar:1", 20, 50),
        Row("TestResizeToFillDownExtendAR", "rs:fill-down:300:300/exar:1", 100, 100),
        Row("TestResizeToFillDownExtendAR", "rs:fill-down:300:125/exar:1", 200, 83),
        Row("TestResizeToFillDownExtendAR", "rs:fill-down:250:300/exar:1", 83, 100),
        Row("TestResizeToFillDownExtendAR", "rs:fill-down:0:50/exar:1", 100, 50),
        Row("TestResizeToFillDownExtendAR", "rs:fill-down:50:0/exar:1", 50, 25),
        Row("TestResizeToFillDownExtendAR", "rs:fill-down:0:200/exar:1", 200, 100),
        Row("TestResizeToFillDownExtendAR", "rs:fill-down:300:0/exar:1", 200, 100),
        Row("TestResultSizeLimit", "mrd:1000/rs:fit:100:100", 100, 50),
        Row("TestResultSizeLimit", "mrd:50/rs:fit:100:100", 50, 25),
        Row("TestResultSizeLimit", "mrd:50/rs:fit:0:0", 50, 25),
        Row("TestResultSizeLimit", "mrd:100/rs:fit:0:100", 100, 50),
        Row("TestResultSizeLimit", "mrd:50/rs:fit:150:0", 50, 25),
        Row("TestResultSizeLimit", "mrd:100/rs:fit:1000:1000", 100, 50),
        Row("TestResultSizeLimit", "mrd:100/rs:fit:1000:1000/el:1", 100, 50),
        Row("TestResultSizeLimit", "mrd:100/rs:fit:1000:2000/ex:1", 50, 100),
        Row("TestResultSizeLimit", "mrd:100/rs:fit:1000:2000/exar:1", 50, 100),
        Row("TestResultSizeLimit", "mrd:100/rs:fit:100:150/rot:90", 50, 100),
        Row("TestResultSizeLimit", "mrd:100/rs:fit:0:0/rot:90", 50, 100),
        Row("TestResultSizeLimit", "mrd:200/rs:fit:100:100/pd:100:200:300:400", 200, 129),
        Row("TestResultSizeLimit", "mrd:1000/rs:fill:100:100", 100, 100),
        Row("TestResultSizeLimit", "mrd:50/rs:fill:100:100", 50, 50),
        Row("TestResultSizeLimit", "mrd:50/rs:fill:1000:50", 50, 13),
        Row("TestResultSizeLimit", "mrd:50/rs:fill:100:1000", 50, 50),
        Row("TestResultSizeLimit", "mrd:50/rs:fill:0:0", 50, 25),
        Row("TestResultSizeLimit", "mrd:100/rs:fill:0:100", 100, 50),
        Row("TestResultSizeLimit", "mrd:50/rs:fill:150:0", 50, 25),
        Row("TestResultSizeLimit", "mrd:100/rs:fill:1000:1000", 100, 50),
        Row("TestResultSizeLimit", "mrd:100/rs:fill:1000:1000/el:1", 100, 100),
        Row("TestResultSizeLimit", "mrd:100/rs:fill:1000:2000/ex:1", 50, 100),
        Row("TestResultSizeLimit", "mrd:100/rs:fill:1000:2000/exar:1", 50, 100),
        Row("TestResultSizeLimit", "mrd:100/rs:fill:100:150/rot:90", 67, 100),
        Row("TestResultSizeLimit", "mrd:100/rs:fill:0:0/rot:90", 50, 100),
        Row("TestResultSizeLimit", "mrd:200/rs:fill:100:100/pd:100:200:300:400", 200, 144),
        Row("TestResultSizeLimit", "mrd:1000/rs:fill-down:100:100", 100, 100),
        Row("TestResultSizeLimit", "mrd:50/rs:fill-down:100:100", 50, 50),
        Row("TestResultSizeLimit", "mrd:50/rs:fill-down:1000:50", 50, 3),
        Row("TestResultSizeLimit", "mrd:50/rs:fill-down:100:1000", 5, 50),
        Row("TestResultSizeLimit", "mrd:50/rs:fill-down:0:0", 50, 25),
        Row("TestResultSizeLimit", "mrd:100/rs:fill-down:0:100", 100, 50),
        Row("TestResultSizeLimit", "mrd:50/rs:fill-down:150:0", 50, 25),
        Row("TestResultSizeLimit", "mrd:100/rs:fill-down:1000:1000", 100, 100),
        Row("TestResultSizeLimit", "mrd:100/rs:fill-down:1000:1000/el:1", 100, 100),
        Row("TestResultSizeLimit", "mrd:100/rs:fill-down:1000:2000/ex:1", 50, 100),
        Row("TestResultSizeLimit", "mrd:100/rs:fill-down:1000:2000/exar:1", 50, 100),
        Row("TestResultSizeLimit", "mrd:100/rs:fill-down:1000:1500/rot:90", 67, 100),
        Row("TestResultSizeLimit", "mrd:100/rs:fill-down:0:0/rot:90", 50, 100),
        Row("TestResultSizeLimit", "mrd:200/rs:fill-down:100:100/pd:100:200:300:400", 200, 144),
        Row("TestResultSizeLimit", "mrd:200/rs:fill-down:1000:1000/pd:100:200:300:400", 200, 144),
    ]

    /// imgproxy's test server allows security options, which `max_result_dimension` is.
    static let parser = OptionsParser(allowsSecurityOptions: true)

    @Test("the size of the result of geometry.png (200x100)", arguments: rows)
    func resultSize(_ row: Row) throws {
        let size = try Self.resultSize(row.options, sourceWidth: 200, sourceHeight: 100)
        #expect(size.width == row.width && size.height == row.height, "\(size.width)x\(size.height)")
    }

    /// The result's size for `options` on a `sourceWidth` x `sourceHeight` image, as the
    /// processor plans it: upright after `rotate`, within `max_result_dimension`.
    static func resultSize(_ options: String, sourceWidth: Int, sourceHeight: Int) throws -> (width: Int, height: Int) {
        let parsed = try parser.parse(options.split(separator: "/"))
        let turned = parsed.rotate % 180 != 0
        var limits = ProcessingPlan.Limits()
        if let dimension = parsed.security.resultDimension, dimension > 0 { limits.maximumDimension = dimension }
        let plan = try ProcessingPlan(
            options: parsed, sourceWidth: turned ? sourceHeight : sourceWidth, sourceHeight: turned ? sourceWidth : sourceHeight,
            limits: limits)
        return (plan.resultWidth, plan.resultHeight)
    }
}

/// The cases imgproxy's tables leave out, worked by hand through its `calcScale` and
/// `calcSizes` (`processing/prepare.go` at v4, eef3b312) on the same 200x100 image: `force`
/// keeps the shrink of each side apart and, where the box has no side, the source's
/// (`dstW := NonZero(poWidth, srcW)`, and no `wshrink = hshrink` for `ResizeForce`); without
/// `enlarge` both shrinks are raised by their least, so `force` keeps its ratio, and the DPR is
/// lowered with them (`DprScale /= minShrink`, then at most the least shrink), which makes the
/// box, and so the crop to it, smaller.
@Suite("imgproxy's calcScale: force, zoom and dpr")
struct ImgproxyCalcScaleTests {
    @Test(
        "sizes as calcScale and calcSizes make them",
        arguments: [
            // wshrink 2, hshrink 1 (the source's height kept): 100x100.
            ("rs:force:100:0", 100, 100),
            // wshrink 1, hshrink 2: 200x50.
            ("rs:force:0:50", 200, 50),
            // wshrink 0.667, hshrink 2; no enlarge: both over 0.667, 1 and 3: 200x33.
            ("rs:force:300:50", 200, 33),
            // With enlarge: 300x50 as asked.
            ("rs:force:300:50/el:1", 300, 50),
            // fill 150x150 at dpr 2: shrinks 0.667 (fill's least); no enlarge, raised to 1 and the
            // DPR to min(2 / 0.667, 1) = 1: scaled 200x100, cropped to the 150x150 box: 150x100.
            ("rs:fill:150:150/dpr:2", 150, 100),
            // The same with enlarge: shrink 0.667 / 2 = 0.333, 600x300, cropped to 300x300.
            ("rs:fill:150:150/dpr:2/el:1", 300, 300),
            // fit 100x100 at dpr 3: shrink 2, DPR min(3, 2) = 2: 200x100, the image's own size.
            ("rs:fit:100:100/dpr:3", 200, 100),
            // extend keeps the DPR (no compensation), then caps it at the least shrink, 1:
            // box 300x300 at DPR 1, the image 200x100 on it.
            ("rs:fit:300:300/dpr:2/ex:1", 300, 300),
            // zoom on one side only, no box: shrinks 1 / 2 and 1 / 1, enlarge: 400x100.
            ("z:2:1/el:1", 400, 100),
            // A zoom without enlarge: shrinks 0.5 and 1 both raised by 0.5, to 1 and 2, so the
            // ratio the zoom asked for is kept by shrinking the other side: 200x50.
            ("z:2:1", 200, 50),
            // Padding at a lowered DPR: fit 400x400 at dpr 2 has shrink 0.5, raised to 1 and the
            // DPR to min(2 / 0.5, 1) = 1: 10 a side at DPR 1.
            ("rs:fit:400:400/dpr:2/pd:10", 220, 120),
        ])
    func size(_ options: String, _ width: Int, _ height: Int) throws {
        let size = try ImgproxyProcessingSizeTableTests.resultSize(options, sourceWidth: 200, sourceHeight: 100)
        #expect(size.width == width && size.height == height, "\(options): \(size.width)x\(size.height)")
    }
}

/// The result sizes of imgproxy's padding and crop tests on the same 200x100 `geometry.png`:
/// `processing/padding_test.go` (`TestPadding`: `dpr:D/padding:T:R:B:L/background:f00/enlarge:1`)
/// and `processing/crop_test.go` (`TestResizeFill` with a DPR, `TestCrop`). Where those tests
/// also compare pixels, they do so by hashes of libvips' own output, which no other resampler
/// makes: only the sizes are ported.
@Suite("imgproxy's tables: padding and crop sizes (processing/padding_test.go, crop_test.go)")
struct ImgproxyPaddingAndCropSizeTests {
    @Test(
        "each row's size",
        arguments: [
            ("TestPadding dpr 0.5", "dpr:0.5/pd:20:30:40:10/bg:f00/el:1", 120, 80),
            ("TestPadding dpr 1", "dpr:1/pd:20:30:40:10/bg:f00/el:1", 240, 160),
            ("TestPadding dpr 2", "dpr:2/pd:20:30:40:10/bg:f00/el:1", 480, 320),
            ("TestResizeFill wider", "rs:fill:100:26/g:ce", 100, 26),
            ("TestResizeFill taller", "rs:fill:26:100/g:ea", 26, 100),
            ("TestResizeFill dpr 2", "rs:fill:100:26/g:ce/dpr:2", 200, 52),
            ("TestResizeFill offset, dpr 0.5", "rs:fill:100:26/g:no:0:5/dpr:0.5", 50, 13),
            ("TestResizeFill offset, dpr 2", "rs:fill:100:26/g:no:0:0.1/dpr:2", 200, 52),
            ("TestCrop", "c:50:50:ce", 50, 50), ("TestCrop offsets", "c:50:50:ce:10:10", 50, 50),
            ("TestCrop relative offsets", "c:50:50:ce:0.1", 50, 50),
        ])
    func size(_ name: String, _ options: String, _ width: Int, _ height: Int) throws {
        let size = try ImgproxyProcessingSizeTableTests.resultSize(options, sourceWidth: 200, sourceHeight: 100)
        #expect(size.width == width && size.height == height, "\(name): \(size.width)x\(size.height)")
    }
}

/// The result sizes of imgproxy's extend tests on the same 200x100 `geometry.png`:
/// `processing/extend_test.go` (`TestExtend`: `width`, `height`, `extend:1:GRAVITY:X:Y`, `dpr`;
/// `TestExtendAspectRatio` the same with `extend_aspect_ratio`). Without `enlarge` the DPR is
/// capped by what the image reaches (`calcScale`), so `dpr:2` keeps a 500x500 canvas and
/// `dpr:0.5` halves it. Their pixels are checked by libvips' hashes there: sizes only.
@Suite("imgproxy's tables: extend sizes (processing/extend_test.go)")
struct ImgproxyExtendSizeTableTests {
    @Test(
        "each row's size",
        arguments: [
            ("TestExtend", "w:500/h:500/ex:1:ce", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:no", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:so", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:ea", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:we", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:noea", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:soea", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:sowe", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:nowe", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:no:0:5", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:no:0:5/dpr:0.5", 250, 250),
            ("TestExtend", "w:500/h:500/ex:1:no:0:5/dpr:2", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:ea:5", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:ea:5/dpr:0.5", 250, 250),
            ("TestExtend", "w:500/h:500/ex:1:ea:5/dpr:2", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:no:0:0.1", 500, 500),
            ("TestExtend", "w:500/h:500/ex:1:no:0:0.1/dpr:0.5", 250, 250),
            ("TestExtend", "w:500/h:500/ex:1:no:0:0.1/dpr:2", 500, 500),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:ce", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:no", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:so", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:ea", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:we", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:noea", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:soea", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:sowe", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:nowe", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:no:0:5", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:no:0:5/dpr:0.5", 150, 300),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:no:0:5/dpr:2", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:ea:5", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:ea:5/dpr:0.5", 150, 300),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:ea:5/dpr:2", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:no:0:0.1", 200, 400),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:no:0:0.1/dpr:0.5", 150, 300),
            ("TestExtendAspectRatio", "w:300/h:600/exar:1:no:0:0.1/dpr:2", 200, 400),
        ])
    func size(_ name: String, _ options: String, _ width: Int, _ height: Int) throws {
        let size = try ImgproxyProcessingSizeTableTests.resultSize(options, sourceWidth: 200, sourceHeight: 100)
        #expect(size.width == width && size.height == height, "\(name) \(options): \(size.width)x\(size.height)")
    }
}
