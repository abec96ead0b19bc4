import Foundation
import Testing
import WebImage

@testable import WebImageDataset

/// img2dataset's resizer arithmetic (its `resizer.py` with albumentations 1.4.24, the version
/// img2dataset 1.47 installs: `SmallestMaxSize`/`LongestMaxSize` scale each side by
/// `max(1, round(side * scale))` with Python's half-to-even `round`; `CenterCrop` starts at
/// `(side - crop) // 2`; `PadIfNeeded` puts `int((size - side) / 2.0)` before and the rest after).
@Suite("The resize modes as img2dataset computes them")
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

    @Test("for PNG --encode-quality is the deflate level, as img2dataset's IMWRITE_PNG_COMPRESSION: 0 stores, 9 is the smallest")
    func pngLevel() throws {
        let gradient = PixelBuffer(
            width: 300, height: 200,
            straightRGBA: (0..<300 * 200 * 4).map { UInt8(truncatingIfNeeded: $0 % 4 == 3 ? 255 : $0 / 4 % 300 + $0 % 4 * 40) })
        let source = try CodersManager.shared.encode(Image(pixels: gradient), as: .png, options: EncodeOptions())
        func result(_ level: Int) throws -> DatasetResizer.Output {
            try DatasetResizer(imageSize: 256, mode: .keepRatio, encodeFormat: .png, encodeQuality: level).process(
                source, limits: DecodeLimits())
        }
        let (stored, smallest) = (try result(0), try result(9))
        // keep_ratio makes the shorter side 256: 384x256 RGB, stored: a filter byte and 1,152 bytes a row.
        #expect(stored.bytes.count > 256 * (384 * 3 + 1) && smallest.bytes.count * 10 < stored.bytes.count)
        let decoded = try [stored, smallest].map { try CodersManager.shared.decode($0.bytes).pixels }
        #expect(decoded[0] == decoded[1] && decoded[0].width == 384 && decoded[0].height == 256)
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
