import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

@Suite("JPEG and PNG coders")
struct CoderTests {
    /// The straight RGBA that scripts/fixtures/make_fixtures.py wrote at (x, y) of a 64×48 gradient.
    private func gradient(x: Int, y: Int) -> (Int, Int, Int, Int) {
        (x * 255 / 63, y * 255 / 47, (x + y) * 255 / 110, 255 - x * 128 / 64)
    }

    @Test("PNG decodes exactly to straight RGBA")
    func pngExact() throws {
        for name in ["gradient-rgba.png", "gradient-interlaced.png"] {
            let image = try PNGCoder().decode(try Fixture.data(name), options: DecodeOptions())
            #expect(image.pixelWidth == 64 && image.pixelHeight == 48)
            #expect(image.hasAlpha && image.sourceFormat == .png)
            for (x, y) in [(0, 0), (63, 47), (10, 20), (40, 5)] {
                let (r, g, b, a) = gradient(x: x, y: y)
                let pixel = image.pixels.pixel(x: x, y: y)
                #expect(Int(pixel.alpha) == a, "\(name) alpha at \(x),\(y)")
                #expect(Int(pixel.red) == r && Int(pixel.green) == g && Int(pixel.blue) == b, "\(name) colour at \(x),\(y)")
            }
        }
    }

    @Test("JPEG decodes close to the source gradient, opaque")
    func jpegClose() throws {
        let image = try JPEGCoder().decode(try Fixture.data("gradient.jpg"), options: DecodeOptions())
        #expect(image.pixelWidth == 64 && image.pixelHeight == 48 && !image.hasAlpha)
        #expect(image.pixels.isOpaque)
        for (x, y) in [(5, 5), (32, 24), (60, 40)] {
            let (r, g, b, _) = gradient(x: x, y: y)
            let pixel = image.pixels.pixel(x: x, y: y)
            #expect(abs(Int(pixel.red) - r) <= 12 && abs(Int(pixel.green) - g) <= 12 && abs(Int(pixel.blue) - b) <= 12, "at \(x),\(y)")
        }
        let progressive = try JPEGCoder().decode(try Fixture.data("gradient-progressive.jpg"), options: DecodeOptions())
        #expect(progressive.pixelWidth == 64)
    }

    @Test("PNG round-trips exactly, with and without alpha")
    func pngRoundTrip() throws {
        let translucent = try PNGCoder().decode(try Fixture.data("gradient-rgba.png"), options: DecodeOptions())
        let encoded = try PNGCoder().encode(translucent, as: .png, options: EncodeOptions())
        #expect(ImageFormat(sniffing: encoded) == .png)
        #expect(try PNGCoder().decode(encoded, options: DecodeOptions()).pixels == translucent.pixels)
        let opaque = try JPEGCoder().decode(try Fixture.data("gradient.jpg"), options: DecodeOptions())
        let opaquePNG = try PNGCoder().encode(opaque, as: .png, options: EncodeOptions())
        let decoded = try PNGCoder().decode(opaquePNG, options: DecodeOptions())
        #expect(decoded.pixels == opaque.pixels)
        #expect(!decoded.hasAlpha, "an opaque image is written as RGB")
    }

    @Test("JPEG encodes at a quality and decodes back close")
    func jpegRoundTrip() throws {
        let source = try JPEGCoder().decode(try Fixture.data("gradient.jpg"), options: DecodeOptions())
        let high = try JPEGCoder().encode(source, as: .jpeg, options: EncodeOptions(quality: 0.95))
        let low = try JPEGCoder().encode(source, as: .jpeg, options: EncodeOptions(quality: 0.2))
        #expect(low.count < high.count)
        let back = try JPEGCoder().decode(high, options: DecodeOptions())
        let difference = zip(back.pixels.bytes, source.pixels.bytes).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(difference <= 16)
    }

    @Test("JPEG thumbnails decode at the smallest DCT scale still at least the size the thumbnail needs")
    func jpegThumbnail() throws {
        let data = try Fixture.data("gradient.jpg")
        let quarter = try JPEGCoder().decode(data, options: DecodeOptions(thumbnail: .init(width: 16, height: 12)))
        #expect((quarter.pixelWidth, quarter.pixelHeight) == (16, 12))
        // A 20x20 box needs 20x15 of a 64x48 image: 3/8 (24x18) is the smallest scale that covers it.
        let threeEighths = try JPEGCoder().decode(data, options: DecodeOptions(thumbnail: .init(width: 20, height: 20)))
        #expect((threeEighths.pixelWidth, threeEighths.pixelHeight) == (24, 18))
        // Without the aspect ratio the whole box is needed: 3/8 is too small in height, 1/2 is 32x24.
        let stretched = try JPEGCoder().decode(
            data, options: DecodeOptions(thumbnail: .init(width: 20, height: 20, preservesAspectRatio: false)))
        #expect((stretched.pixelWidth, stretched.pixelHeight) == (32, 24))
        let full = try JPEGCoder().decode(data, options: DecodeOptions(thumbnail: .init(width: 100, height: 100)))
        #expect(full.pixelWidth == 64)
    }

    @Test("a thumbnail from the DCT scale drops the row libjpeg rounds up: 2048x1365 in 512x512 is 512x341")
    func jpegThumbnailDropsTheRoundedUpRow() throws {
        let photo = Image(pixels: PixelBuffer(width: 2048, height: 1365, straightRGBA: [UInt8](repeating: 90, count: 2048 * 1365 * 4)))
        let data = try CodersManager.shared.encode(photo, as: .jpeg)
        let thumbnail = try CodersManager.shared.decode(data, options: DecodeOptions(thumbnail: .init(width: 512, height: 512)))
        // 1365 / 4 = 341.25: libjpeg makes 342 rows, the last from a quarter of a source row.
        #expect((thumbnail.pixelWidth, thumbnail.pixelHeight) == (512, 341))
        // The decoder's own steps, without resampling (the proxy's plan drops the row itself).
        let steps = try JPEGCoder().decode(data, options: DecodeOptions(thumbnail: .init(width: 512, height: 512, resamples: false)))
        #expect((steps.pixelWidth, steps.pixelHeight) == (512, 342))
    }

    @Test("pixel limits are checked from the header, before decoding")
    func limits() throws {
        let tight = DecodeOptions(limits: DecodeLimits(maximumPixelCount: 64 * 48 - 1))
        #expect(throws: WebImageError(.tooLarge)) { try JPEGCoder().decode(try Fixture.data("gradient.jpg"), options: tight) }
        #expect(throws: WebImageError(.tooLarge)) { try PNGCoder().decode(try Fixture.data("gradient-rgba.png"), options: tight) }
        let small = DecodeOptions(limits: DecodeLimits(maximumInputSize: 100))
        #expect(throws: WebImageError(.tooLarge)) { try JPEGCoder().decode(try Fixture.data("gradient.jpg"), options: small) }
    }

    @Test("truncated and corrupt files are decode failures", arguments: ["gradient.jpg", "gradient-rgba.png", "gradient-progressive.jpg"])
    func truncated(name: String) throws {
        let data = try Fixture.data(name)
        let manager = CodersManager()
        for length in [data.count / 2, data.count - 30, 40] {
            #expect(throws: WebImageError(.decodeFailed), "\(name) cut to \(length)") {
                try manager.decode(data.prefix(length))
            }
        }
    }

    @Test("the coders manager dispatches on the sniffed format, newest coder first")
    func manager() throws {
        struct Claims: ImageCoder {
            func canDecode(_ format: ImageFormat) -> Bool { format == .png }
            func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
                Image(pixels: PixelBuffer(width: 1, height: 1, premultipliedRGBA: [1, 2, 3, 255]))
            }
            func canEncode(to format: ImageFormat) -> Bool { false }
            func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data { Data() }
        }
        let manager = CodersManager()
        #expect(try manager.decode(try Fixture.data("gradient-rgba.png")).pixelWidth == 64)
        manager.add(Claims())
        #expect(try manager.decode(try Fixture.data("gradient-rgba.png")).pixelWidth == 1)
        #expect(try manager.decode(try Fixture.data("gradient.jpg")).pixelWidth == 64)
        #expect(throws: WebImageError(.notAnImage)) { try manager.decode(Data("<html>".utf8)) }
        #expect(throws: WebImageError(.unsupportedFormat)) { try manager.decode(Data("%PDF-1.7\n".utf8)) }
        #expect(throws: WebImageError(.unsupportedFormat)) {
            try manager.encode(Image(pixels: PixelBuffer(width: 1, height: 1, premultipliedRGBA: [0, 0, 0, 255])), as: .pdf)
        }
    }

    @Test("the Accept header names exactly the formats the coders decode")
    func acceptHeader() {
        struct PDFDecoder: ImageCoder {
            func canDecode(_ format: ImageFormat) -> Bool { format == .pdf }
            func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
                throw WebImageError(.decodeFailed)
            }
            func canEncode(to format: ImageFormat) -> Bool { false }
            func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data { Data() }
        }
        let manager = CodersManager()
        // The video formats with the Video trait, which the Accept header leaves out.
        #if Video
        let videos: [ImageFormat] = [.mp4, .quickTime, .webM]
        #else
        let videos: [ImageFormat] = []
        #endif
        #expect(manager.decodableFormats == [.jpeg, .png, .gif, .tiff, .webP, .heic, .heif, .svg, .avif, .bmp, .ico, .jpegXL] + videos)
        let builtIn =
            "image/jpeg,image/png,image/gif,image/tiff,image/webp,image/heic,image/heif,image/svg+xml,image/avif,image/bmp,image/x-icon,image/jxl"
        #expect(manager.acceptHeader == builtIn + ",image/*;q=0.8")
        manager.add(PDFDecoder())
        let withPDF = builtIn.replacingOccurrences(of: "image/heif,", with: "image/heif,application/pdf,")
        #expect(manager.acceptHeader == withPDF + ",image/*;q=0.8", "in the order of ImageFormat's cases")
        #expect(CodersManager(coders: [PNGCoder()]).acceptHeader == "image/png,image/*;q=0.8")
    }

    @Test("pixels are kept straight; premultiplying rounds, and premultiplied input is divided back")
    func straightAndPremultiplied() {
        let buffer = PixelBuffer(width: 3, height: 1, straightRGBA: [255, 0, 0, 128, 10, 20, 30, 255, 200, 100, 50, 3])
        #expect(buffer.pixel(x: 0, y: 0) == (255, 0, 0, 128))
        #expect(buffer.pixel(x: 2, y: 0) == (200, 100, 50, 3))
        #expect(buffer.premultipliedRGBA() == [128, 0, 0, 128, 10, 20, 30, 255, 2, 1, 1, 3])
        let divided = PixelBuffer(width: 3, height: 1, premultipliedRGBA: [128, 0, 0, 128, 10, 20, 30, 255, 9, 9, 9, 0])
        #expect(divided.bytes == [255, 0, 0, 128, 10, 20, 30, 255, 0, 0, 0, 0])
        #expect(!buffer.isOpaque)
        #expect(PixelBuffer(width: 2, height: 1, straightRGBA: [1, 2, 3, 255, 4, 5, 6, 255]).isOpaque)
    }

    @Test("the @2x and @3x key rule")
    func keyScale() {
        #expect(Image.scale(forKey: "https://x.com/icon@2x.png") == 2)
        #expect(Image.scale(forKey: "https://x.com/icon@3x.png") == 3)
        #expect(Image.scale(forKey: "https://x.com/icon@2x@3x.png") == 3, "3x is checked last and wins")
        #expect(Image.scale(forKey: "https://x.com/icon@2xx.png") == 1, "needs the dot right after")
        #expect(Image.scale(forKey: "a@2x.p") == 1, "keys under 8 characters keep 1")
        #expect(Image.scale(forKey: "https://x.com/icon.png") == 1)
    }
}

@Suite("CMYK JPEG")
struct CMYKJPEGTests {
    /// A CMYK JPEG as Photoshop writes it (Adobe marker, inverted ink) decodes to the RGB Pillow
    /// shows, within 2 levels (the two sides' IDCTs differ by a level; the conversion rounds).
    @Test func cmykMatchesPillow() throws {
        let image = try CodersManager.shared.decode(try Fixture.data("cmyk.jpg"))
        let expected = try PillowFrames.load("cmyk-jpg.json").pixels(0)
        #expect(image.pixelWidth == expected.width && image.pixelHeight == expected.height && image.hasAlpha == false)
        let difference = TransformerGoldenTests.maximumDifference(image.pixels, expected)
        #expect(difference <= 2, "max channel difference \(difference)")
    }

    @Test func cmykThumbnailsUseTheDCTScale() throws {
        let image = try JPEGCoder().decode(try Fixture.data("cmyk.jpg"), options: DecodeOptions(thumbnail: .init(width: 16, height: 12)))
        #expect(image.pixelWidth == 16 && image.pixelHeight == 12 && image.pixels.isOpaque)
    }
}
