import Foundation

/// Turns the image by an angle in degrees, counter-clockwise for positive angles as in
/// SDWebImage and Pillow (SDWebImage's `SDImageRotationTransformer`, which takes radians).
///
/// Multiples of 90° are exact pixel moves. Other angles sample bilinearly from premultiplied
/// pixels (`PremultipliedPixel`), as Pillow's `rotate` does; the corners the turned image leaves empty are transparent. With `fitsSize` the
/// canvas grows to hold the whole turned image; without, it keeps the original size and the
/// corners are cut off.
///
/// Key: `rotate:DEG:fit` or `rotate:DEG:crop`, for example `rotate:30:fit`.
public struct RotationTransformer: ImageTransformer, Hashable {
    /// Degrees, counter-clockwise.
    public var degrees: Double
    /// Grow the canvas to hold the turned image. Default true.
    public var fitsSize: Bool

    /// Creates a rotation.
    public init(degrees: Double, fitsSize: Bool = true) {
        self.degrees = degrees
        self.fitsSize = fitsSize
    }

    public var transformerKey: String { "rotate:\(TransformSpec.format(degrees)):\(fitsSize ? "fit" : "crop")" }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        image.mappingFrames(keepingHighBitDepth: quarterTurns != nil, rotate)
    }

    /// The whole quarter turns of a rotation that only moves pixels: a multiple of 90° whose
    /// canvas stays whole; nil for any other (resampled) one.
    private var quarterTurns: Int? {
        let turns = degrees / 90
        guard turns == turns.rounded(), abs(turns) < Double(Int.max) else { return nil }
        let quarterTurns = Int(turns)
        return !fitsSize && quarterTurns % 2 != 0 ? nil : quarterTurns
    }

    /// The turned pixels, or nil when the turned canvas is over ``PixelBuffer/maximumPixelCount``.
    func rotate(_ pixels: PixelBuffer) -> PixelBuffer? {
        guard let quarterTurns else { return rotateFreely(pixels) }
        return pixels.rotated(quarterTurns: quarterTurns)
    }

    private func rotateFreely(_ source: PixelBuffer) -> PixelBuffer? {
        let radians = degrees * .pi / 180
        let cosine = cos(radians)
        let sine = sin(radians)
        let (width, height) =
            fitsSize ? Self.boundingSize(source.width, source.height, cosine: cosine, sine: sine) : (source.width, source.height)
        guard (try? PixelBuffer.byteCount(width: width, height: height)) != nil else { return nil }
        let sourceCentre = (x: Double(source.width) / 2, y: Double(source.height) / 2)
        let outputCentre = (x: Double(width) / 2, y: Double(height) / 2)
        let output = ParallelRows.fill(rows: height, width: width) { y, outputRow in
            source.bytes.withUnsafeBytes { input in
                for x in 0..<width {
                    // Counter-clockwise on screen (y down): map each output centre back by the inverse turn.
                    let dx = Double(x) + 0.5 - outputCentre.x
                    let dy = Double(y) + 0.5 - outputCentre.y
                    let sourceX = cosine * dx - sine * dy + sourceCentre.x
                    let sourceY = sine * dx + cosine * dy + sourceCentre.y
                    let sample = Self.bilinear(input, source.width, source.height, sourceX - 0.5, sourceY - 0.5)
                    PremultipliedPixel.store(sample, to: outputRow + x * 4)
                }
            }
        }
        return PixelBuffer(width: width, height: height, straightRGBA: output)
    }

    /// The size that holds the turned rectangle: from the lowest to the highest corner, in whole
    /// pixels (so 90° turns and tiny angles do not grow the canvas by rounding noise).
    static func boundingSize(_ width: Int, _ height: Int, cosine: Double, sine: Double) -> (Int, Int) {
        let corners = [(0.0, 0.0), (Double(width), 0.0), (Double(width), Double(height)), (0.0, Double(height))]
            .map { x, y in (cosine * x + sine * y, -sine * x + cosine * y) }
        let xs = corners.map { ($0.0 * 1e6).rounded() / 1e6 }
        let ys = corners.map { ($0.1 * 1e6).rounded() / 1e6 }
        let newWidth = Int(xs.max()!.rounded(.up) - xs.min()!.rounded(.down))
        let newHeight = Int(ys.max()!.rounded(.up) - ys.min()!.rounded(.down))
        return (max(1, newWidth), max(1, newHeight))
    }

    /// Samples between the four nearest pixels; outside the image counts as transparent.
    private static func bilinear(_ input: UnsafeRawBufferPointer, _ width: Int, _ height: Int, _ x: Double, _ y: Double) -> SIMD4<Float> {
        let x0 = Int(x.rounded(.down))
        let y0 = Int(y.rounded(.down))
        guard x0 >= -1, y0 >= -1, x0 < width, y0 < height else { return .zero }
        let fx = Float(x - Double(x0))
        let fy = Float(y - Double(y0))
        @inline(__always) func pixel(_ px: Int, _ py: Int) -> SIMD4<Float> {
            guard px >= 0, py >= 0, px < width, py < height else { return .zero }
            return PremultipliedPixel.load(input.baseAddress! + (py * width + px) * 4)
        }
        let top = pixel(x0, y0) * (1 - fx) + pixel(x0 + 1, y0) * fx
        let bottom = pixel(x0, y0 + 1) * (1 - fx) + pixel(x0 + 1, y0 + 1) * fx
        return top * (1 - fy) + bottom * fy
    }
}
