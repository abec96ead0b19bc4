import Foundation
import WebImage

/// The playground's own source images, drawn and encoded at start-up so that the page works
/// without any other server and the binary carries no image files. Their URLs use the `local`
/// scheme (`local:///playground/scene.jpg`, as imgproxy names sources that are not fetched):
/// the proxy reads them from here, never from the network.
struct DemoSources: Sendable {
    /// One image.
    struct Source: Sendable {
        var name: String
        var label: String
        var contentType: String
        var data: Data
        /// What the proxy's source URL for it is.
        var url: String { "local:///playground/" + name }
    }

    let sources: [Source]

    /// Draws the images: a 1200x800 landscape with a textured subject off centre (for smart
    /// crop and focus points) as JPEG, and a 640x480 translucent shape as PNG (for backgrounds).
    init(coders: CodersManager = .shared) throws(WebImageError) {
        let scene = try coders.encode(Image(pixels: Self.scene()), as: .jpeg, options: EncodeOptions(quality: 0.9))
        let shape = try coders.encode(Image(pixels: Self.shape()), as: .png)
        sources = [
            Source(name: "scene.jpg", label: "Landscape, 1200x800 JPEG", contentType: "image/jpeg", data: scene),
            Source(name: "shape.png", label: "Translucent shape, 640x480 PNG", contentType: "image/png", data: shape),
        ]
    }

    /// The source for a `local:///playground/NAME` path.
    func source(path: String) -> Source? {
        sources.first { "/playground/" + $0.name == path }
    }

    private static func scene() -> PixelBuffer {
        let width = 1200
        let height = 800
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let hill = 520 + 50 * sin(Double(x) / 140) + 25 * sin(Double(x) / 47)
                var pixel: (Double, Double, Double)
                if Double(y) < hill {
                    let t = Double(y) / hill
                    pixel = (110 + 120 * t, 170 + 70 * t, 235 + 15 * t)
                } else {
                    let t = (Double(y) - hill) / (Double(height) - hill)
                    pixel = (70 - 30 * t, 150 - 60 * t, 60 - 30 * t)
                }
                let sun = hypot(Double(x) - 1010, Double(y) - 150)
                if sun < 70 { pixel = (255, 214, 90) }
                // The subject: a striped disc at a third of the width, the busiest part of the image.
                let subject = hypot(Double(x) - 380, Double(y) - 520)
                if subject < 130 {
                    let stripe = (x / 9 + y / 9) % 2 == 0
                    pixel = stripe ? (214, 64, 40) : (250, 236, 220)
                }
                let index = (y * width + x) * 4
                bytes[index] = UInt8(clamping: Int(pixel.0))
                bytes[index + 1] = UInt8(clamping: Int(pixel.1))
                bytes[index + 2] = UInt8(clamping: Int(pixel.2))
            }
        }
        return PixelBuffer(width: width, height: height, straightRGBA: bytes)
    }

    private static func shape() -> PixelBuffer {
        let width = 640
        let height = 480
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let distance = hypot(Double(x) - 320, Double(y) - 240)
                let index = (y * width + x) * 4
                if distance < 120 {
                    (bytes[index], bytes[index + 1], bytes[index + 2], bytes[index + 3]) = (30, 90, 220, 150)
                } else if distance < 190 {
                    (bytes[index], bytes[index + 1], bytes[index + 2], bytes[index + 3]) = (250, 180, 20, 255)
                }
            }
        }
        return PixelBuffer(width: width, height: height, straightRGBA: bytes)
    }
}
