import Testing
@testable import WebImageCodecs
import WebImageTestSupport

/// The transformers the proxy added to the library: sharpen, pixelate, canvas, background and
/// smart crop, on small images whose right answers are known.
@Suite("Proxy transformers")
struct ProxyTransformerTests {
    /// A `width` x `height` opaque grey image whose pixel (x, y) has the value `value(x, y)`.
    func grey(_ width: Int, _ height: Int, _ value: (Int, Int) -> UInt8) -> Image {
        var bytes: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width { bytes += [value(x, y), value(x, y), value(x, y), 255] }
        }
        return Image(pixels: PixelBuffer(width: width, height: height, premultipliedRGBA: bytes))
    }

    @Test("sharpening steepens an edge and leaves flat areas alone")
    func sharpen() throws {
        let edge = grey(16, 4) { x, _ in x < 8 ? 100 : 150 }
        let sharpened = try #require(SharpeningTransformer(sigma: 1).transform(edge, forKey: ""))
        #expect(sharpened.pixels.pixel(x: 0, y: 0).red == 100)
        #expect(sharpened.pixels.pixel(x: 15, y: 0).red == 150)
        #expect(sharpened.pixels.pixel(x: 7, y: 0).red < 100)
        #expect(sharpened.pixels.pixel(x: 8, y: 0).red > 150)
    }

    @Test("pixelating averages each block, edge blocks cut to the image")
    func pixelate() throws {
        let ramp = grey(5, 2) { x, _ in UInt8(x * 10) }
        let blocks = try #require(PixelatingTransformer(blockSize: 2).transform(ramp, forKey: ""))
        #expect((0..<5).map { blocks.pixels.pixel(x: $0, y: 1).red } == [5, 5, 25, 25, 40])
    }

    @Test("a canvas places the image at its offset over the fill, cutting what falls outside")
    func canvas() throws {
        let white = grey(2, 2) { _, _ in 255 }
        let placed = try #require(CanvasTransformer(width: 4, height: 3, x: 3, y: -1, color: .black).transform(white, forKey: ""))
        #expect((placed.pixelWidth, placed.pixelHeight) == (4, 3))
        #expect(placed.pixels.pixel(x: 3, y: 0).red == 255)
        #expect(placed.pixels.pixel(x: 3, y: 1).red == 0)
        #expect(placed.pixels.pixel(x: 2, y: 0) == (0, 0, 0, 255))
        let padded = try #require(CanvasTransformer(width: 4, height: 4, x: 1, y: 1).transform(white, forKey: ""))
        #expect(padded.hasAlpha && padded.pixels.pixel(x: 0, y: 0).alpha == 0)
    }

    @Test("a background composites translucent pixels over it and makes the image opaque")
    func background() throws {
        let halfRed = Image(pixels: PixelBuffer(width: 1, height: 1, straightRGBA: [255, 0, 0, 128]))
        let flat = try #require(BackgroundTransformer(color: .white).transform(halfRed, forKey: ""))
        let pixel = flat.pixels.pixel(x: 0, y: 0)
        #expect(pixel.alpha == 255 && pixel.red == 255 && (126...128).contains(pixel.green))
        #expect(!flat.hasAlpha)
    }

    @Test("a smart crop keeps the detailed part of a flat image")
    func smartCrop() throws {
        // Flat grey with a checkerboard patch at x 20..<28, y 2..<6.
        let image = grey(40, 8) { x, y in (20..<28).contains(x) && (2..<6).contains(y) ? ((x + y) % 2 == 0 ? 0 : 255) : 128 }
        let cropped = try #require(SmartCroppingTransformer(width: 10, height: 4).transform(image, forKey: ""))
        #expect((cropped.pixelWidth, cropped.pixelHeight) == (10, 4))
        let origin = SmartCroppingTransformer.origin(of: image.pixels, width: 10, height: 4)
        #expect((18...20).contains(origin.x), "the window covers the whole patch")
        #expect((1...2).contains(origin.y))
        #expect(SmartCroppingTransformer.bestStart(of: [0, 0, 0, 0, 0], window: 3) == 1, "a flat image stays centred")
    }
}
