/// Rounds corners, with an optional border inside the edge (SDWebImage's
/// `SDImageRoundCornerTransformer`). Edges are anti-aliased by pixel coverage.
///
/// Key: `round:R:CORNERS:BORDER:COLOR`, for example `round:16:all:0:#000000` or
/// `round:8:tl+tr:2:#ff0000`; the spec may stop after the radius.
public struct RoundCornerTransformer: ImageTransformer, Hashable {
    /// Corner radius in pixels.
    public var radius: Double
    /// The corners to round. Default all.
    public var corners: RectCorners
    /// Border width in pixels, drawn inside the edge; 0 for none.
    public var borderWidth: Double
    /// Border colour. Default black.
    public var borderColor: RGBAColor

    /// Creates the transformer; negative sizes count as 0.
    public init(radius: Double, corners: RectCorners = .all, borderWidth: Double = 0, borderColor: RGBAColor = .black) {
        self.radius = max(0, radius)
        self.corners = corners
        self.borderWidth = max(0, borderWidth)
        self.borderColor = borderColor
    }

    public var transformerKey: String {
        "round:\(TransformSpec.format(radius)):\(corners.specText):\(TransformSpec.format(borderWidth)):\(borderColor.hexString)"
    }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        image.mappingFrames(round)
    }

    private func round(_ pixels: PixelBuffer) -> PixelBuffer {
        let halfWidth = Double(pixels.width) / 2
        let halfHeight = Double(pixels.height) / 2
        let radius = min(self.radius, halfWidth, halfHeight)
        let border = borderColor.premultiplied
        var output = pixels.bytes
        output.withUnsafeMutableBytes { bytes in
            for y in 0..<pixels.height {
                for x in 0..<pixels.width {
                    let px = Double(x) + 0.5 - halfWidth
                    let py = Double(y) + 0.5 - halfHeight
                    let distance = signedDistance(px, py, halfWidth, halfHeight, radius: radius)
                    let shape = Float(min(max(0.5 - distance, 0), 1))
                    let inner = Float(min(max(0.5 - distance - borderWidth, 0), 1))
                    guard shape < 1 || inner < 1 else { continue }
                    let offset = (y * pixels.width + x) * 4
                    let pixel = PremultipliedPixel.load(bytes.baseAddress! + offset)
                    let painted = pixel * inner + border * (shape - inner)
                    PremultipliedPixel.store(painted, to: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset)
                }
            }
        }
        return PixelBuffer(width: pixels.width, height: pixels.height, straightRGBA: output)
    }

    /// Distance from a point (relative to the centre) to the edge of the rounded rectangle:
    /// negative inside. Only the corners in ``corners`` are rounded.
    private func signedDistance(_ px: Double, _ py: Double, _ halfWidth: Double, _ halfHeight: Double, radius: Double) -> Double {
        let corner: RectCorners = py < 0 ? (px < 0 ? .topLeft : .topRight) : (px < 0 ? .bottomLeft : .bottomRight)
        let r = corners.contains(corner) ? radius : 0
        let qx = abs(px) - (halfWidth - r)
        let qy = abs(py) - (halfHeight - r)
        let outside = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot()
        return outside + min(max(qx, qy), 0) - r
    }
}
