import Foundation
public import WebImage

/// Blurs the boxes of an image as img2dataset 1.47's `BoundingBoxBlurrer` does (its
/// `blurrer.py`, which DataComp's download runs with `bbox_col="face_bboxes"`): each box
/// `[x_min, y_min, x_max, y_max]` in shares of the image's size, as whole pixels (Python's `int`,
/// towards zero), widened on every side by a tenth of its larger side (`int` again), clipped to
/// `width - 1` and `height - 1`, and filled into a mask that covers `[y0, y1) x [x0, x1)`. The
/// image and the mask are blurred alike with a Gaussian of `k = max(3, 2 * ceil(0.1 * d) + 1)`
/// taps (made odd), `d` the largest box side, whose sigma OpenCV derives from `k` (albumentations
/// passes none: `0.3 * ((k - 1) * 0.5 - 1) + 0.8`, or OpenCV's fixed tables for 3, 5 and 7 taps),
/// borders reflected without repeating the edge (`BORDER_REFLECT_101`); each pixel becomes
/// `image * (1 - mask) + blurred * mask`, cut to a byte towards zero as NumPy's `astype` does.
/// img2dataset runs it on the three colour channels after alpha was matted on white; so do the
/// callers here.
///
/// Where this differs: the sums run tap by tap in `Float`, where OpenCV's vectorised loops add in
/// another order, so a blurred pixel can differ by a level (the tests bound it against
/// img2dataset's own output). img2dataset 1.47 blurs after the scale and before the crop or the
/// pad (its `resizer.py`), not before the resize: so does the `webimage prefetch` resizer.
public struct BoundingBoxBlur: Sendable {
    /// The boxes, each `[x_min, y_min, x_max, y_max]` in [0, 1] of the image's width and height.
    public var boxes: [[Double]]

    /// The blur of `boxes`; a box that is not four numbers is dropped.
    public init(boxes: [[Double]]) {
        self.boxes = boxes.filter { $0.count == 4 && $0.allSatisfy(\.isFinite) }
    }

    /// The boxes of a list's column value: a list of lists of four numbers (DataComp's
    /// `face_bboxes`); nil for null or an empty text, anything else is a row error's text.
    public static func boxes(in value: JSONValue) throws(DatasetError) -> [[Double]]? {
        switch value {
        case .null: return nil
        case .array(let boxes):
            return try boxes.map { box throws(DatasetError) in
                guard case .array(let corners) = box, corners.count == 4 else { throw DatasetError("a box is not four numbers") }
                return try corners.map { corner throws(DatasetError) in
                    switch corner {
                    case .number(let value): return value
                    case .integer(let value): return Double(value)
                    default: throw DatasetError("a box corner is not a number")
                    }
                }
            }
        case .string(let text):
            // A CSV or TSV list holds the column as text (empty for none): JSON, as pyarrow's
            // reader leaves it for img2dataset to read.
            if text.trimmingCharacters(in: .whitespaces).isEmpty { return nil }
            guard let parsed = try? JSONParser.parse(Array(text.utf8)) else { throw DatasetError("the boxes are not a list of lists") }
            return try boxes(in: parsed)
        default: throw DatasetError("the boxes are not a list of lists")
        }
    }

    /// `image`'s first frame with its boxes blurred (the other frames as they are); the image
    /// itself when there is no box.
    public func apply(to image: Image) -> Image {
        guard !boxes.isEmpty else { return image }
        var result = image
        result.frames[0] = ImageFrame(pixels: apply(to: image.pixels), duration: image.frames[0].duration)
        return result
    }

    /// The blurred pixels.
    public func apply(to pixels: PixelBuffer) -> PixelBuffer {
        let (width, height) = (pixels.width, pixels.height)
        guard !boxes.isEmpty, width > 0, height > 0 else { return pixels }
        var mask = [Float](repeating: 0, count: width * height)
        var largest = 0
        for box in boxes {
            var corners = [
                Int(box[0] * Double(width)), Int(box[1] * Double(height)), Int(box[2] * Double(width)), Int(box[3] * Double(height)),
            ]
            let side = max(corners[2] - corners[0], corners[3] - corners[1])
            largest = max(largest, side)
            let widen = 0.1 * Double(side)
            corners[0] = min(max(Int(Double(corners[0]) - widen), 0), width - 1)
            corners[1] = min(max(Int(Double(corners[1]) - widen), 0), height - 1)
            corners[2] = min(max(Int(Double(corners[2]) + widen), 0), width - 1)
            corners[3] = min(max(Int(Double(corners[3]) + widen), 0), height - 1)
            guard corners[2] > corners[0], corners[3] > corners[1] else { continue }
            for y in corners[1]..<corners[3] {
                for x in corners[0]..<corners[2] { mask[y * width + x] = 1 }
            }
        }
        let kernel = Self.kernel(taps: Self.taps(largestSide: largest))
        let blurredMask = Self.blur([mask], width: width, height: height, kernel: kernel)[0]
        let channels = (0..<3).map { channel in
            [Float](unsafeUninitializedCapacity: width * height) { buffer, count in
                for index in 0..<(width * height) { buffer[index] = Float(pixels.bytes[index * 4 + channel]) / 255 }
                count = width * height
            }
        }
        let blurred = Self.blur(channels, width: width, height: height, kernel: kernel)
        var bytes = pixels.bytes
        for index in 0..<(width * height) where blurredMask[index] > 0 {
            let weight = blurredMask[index]
            for channel in 0..<3 {
                let value = channels[channel][index] * (1 - weight) + blurred[channel][index] * weight
                bytes[index * 4 + channel] = UInt8(min(max(value * 255, 0), 255))
            }
        }
        return PixelBuffer(width: width, height: height, straightRGBA: bytes)
    }

    /// img2dataset's kernel size for a largest box side of `side` pixels.
    static func taps(largestSide side: Int) -> Int {
        let size = max(3, Int(2 * (0.1 * Double(side)).rounded(.up) + 1))
        return size % 2 == 0 ? size + 1 : size
    }

    /// OpenCV's `getGaussianKernel(k, 0)`: its fixed tables up to 7 taps, else the Gaussian of
    /// sigma `0.3 * ((k - 1) * 0.5 - 1) + 0.8`, normalised.
    static func kernel(taps: Int) -> [Float] {
        switch taps {
        case 3: return [0.25, 0.5, 0.25]
        case 5: return [0.0625, 0.25, 0.375, 0.25, 0.0625]
        case 7: return [0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125]
        default:
            let sigma = 0.3 * (Double(taps - 1) * 0.5 - 1) + 0.8
            let middle = Double(taps - 1) / 2
            let weights = (0..<taps).map { exp(-((Double($0) - middle) * (Double($0) - middle)) / (2 * sigma * sigma)) }
            let sum = weights.reduce(0, +)
            return weights.map { Float($0 / sum) }
        }
    }

    /// Each plane blurred across, then down, by `kernel`, edges reflected without repeating the
    /// edge pixel (OpenCV's `BORDER_REFLECT_101`).
    static func blur(_ planes: [[Float]], width: Int, height: Int, kernel: [Float]) -> [[Float]] {
        let radius = kernel.count / 2
        func reflect(_ index: Int, _ count: Int) -> Int {
            guard count > 1 else { return 0 }
            var index = index
            while index < 0 || index >= count { index = index < 0 ? -index : 2 * (count - 1) - index }
            return index
        }
        return planes.map { plane in
            var across = [Float](repeating: 0, count: plane.count)
            for y in 0..<height {
                let row = y * width
                for x in 0..<width {
                    var sum: Float = 0
                    for tap in 0..<kernel.count { sum += kernel[tap] * plane[row + reflect(x + tap - radius, width)] }
                    across[row + x] = sum
                }
            }
            var down = [Float](repeating: 0, count: plane.count)
            for y in 0..<height {
                for x in 0..<width {
                    var sum: Float = 0
                    for tap in 0..<kernel.count { sum += kernel[tap] * across[reflect(y + tap - radius, height) * width + x] }
                    down[y * width + x] = sum
                }
            }
            return down
        }
    }
}
