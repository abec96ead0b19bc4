import Foundation
import Testing
import WebImageCodecs
import WebImageTesting
import WebImageTestSupport

/// SVG through librsvg (issue 17): documents drawn beside rsvg-convert at their own size and at
/// thumbnail sizes (drawn there, never drawn large and shrunk), the pixel limit, damaged
/// documents, and proof that no reference outside the document is ever loaded.
@Suite("SVG")
struct SVGCoderTests {
    static let manifest: [String: RGBAExpectation] = Fixture.manifest("svg")

    /// Compared premultiplied, as cairo draws (each side divides alpha out with its own rounding).
    static func expectLikeRsvgConvert(_ image: Image, _ key: String) throws {
        let expected = try #require(manifest[key])
        #expect(image.pixelWidth == expected.width && image.pixelHeight == expected.height, "\(key)")
        let difference = CorpusTests.maximumDifference(image.pixels.premultipliedRGBA(), expected.rgba)
        #expect(difference <= 1, "\(key): max channel difference \(difference)")
    }

    @Test(arguments: ["viewbox.svg", "gradient.svg", "text.svg", "inches.svg"])
    func drawsLikeRsvgConvert(name: String) throws {
        let data = try Fixture.data("svg/" + name)
        let image = try CodersManager.shared.decode(data)
        #expect(image.sourceFormat == .svg)
        try Self.expectLikeRsvgConvert(image, name)
        let header = try ImageHeader(data: data)
        #expect(header.format == .svg && header.width == image.pixelWidth && header.height == image.pixelHeight)
    }

    @Test("a thumbnail is drawn at its size, larger or smaller than the document's")
    func thumbnails() throws {
        for (name, width, height) in [("gradient.svg", 144, 144), ("gradient.svg", 24, 24), ("viewbox.svg", 400, 300)] {
            let options = DecodeOptions(thumbnail: ThumbnailSize(width: width, height: height))
            let image = try CodersManager.shared.decode(try Fixture.data("svg/" + name), options: options)
            try Self.expectLikeRsvgConvert(image, "\(name)@\(width)x\(height)")
        }
        let stretched = DecodeOptions(thumbnail: ThumbnailSize(width: 30, height: 30, preservesAspectRatio: false))
        let image = try CodersManager.shared.decode(try Fixture.data("svg/gradient.svg"), options: stretched)
        #expect(image.pixelWidth == 30 && image.pixelHeight == 30)
    }

    @Test("a document larger than the pixel limit is drawn smaller to fit it, with a warning")
    func pixelLimit() throws {
        let huge = Data(
            #"<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="50000"><rect width="100%" height="100%" fill="red"/></svg>"#
                .utf8)
        let image = try CodersManager.shared.decode(huge, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: 20_000)))
        #expect(image.pixelWidth * image.pixelHeight <= 20_000 && image.pixelWidth == 2 * image.pixelHeight)
        #expect(image.warnings.contains { $0.contains("pixel limit") })
        #expect(image.pixels.bytes.prefix(4) == [255, 0, 0, 255])
        // Found by FuzzSVG: a height of 4.4 * 10^17 inches overflowed the conversion to whole pixels.
        let absurd = Data(
            #"<svg xmlns="http://www.w3.org/2000/svg" width="1in" height="04444444444444444.5in" viewBox="0 0 10 5"><rect width="10" height="5"/></svg>"#
                .utf8)
        let drawn = try CodersManager.shared.decode(absurd)
        #expect(drawn.pixelWidth >= 1 && drawn.pixelWidth * drawn.pixelHeight <= DecodeLimits().maximumPixelCount)
        #expect(try ImageHeader(data: absurd).height == SVGCoder.maximumSide, "the header says the size it can be drawn at")
        // Past Int's range, and a long side within the pixel limit: cut to cairo's side, ratio kept.
        for (height, expected) in [("1e30", (1, SVGCoder.maximumSide)), ("10", (SVGCoder.maximumSide, 8))] {
            let width = height == "10" ? "40000" : "10"
            let document = Data(
                #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(width)" height="\#(height)"><rect width="100%" height="100%"/></svg>"#
                    .utf8)
            let image = try CodersManager.shared.decode(document)
            #expect(
                image.pixelWidth == expected.0 && image.pixelHeight == expected.1,
                "\(width)x\(height): \(image.pixelWidth)x\(image.pixelHeight)")
            #expect(image.warnings.contains { $0.contains("largest side") })
        }
    }

    @Test("no file, network address, XInclude or stylesheet outside the document is loaded")
    func noExternalResources() async throws {
        let origin = try await OriginServer.start()
        let directory = try TemporaryDirectory()
        let red = try CodersManager.shared.encode(
            Image(pixels: PixelBuffer(width: 1, height: 1, straightRGBA: [255, 0, 0, 255])), as: .png)
        let file = directory.url.appendingPathComponent("red.png")
        try red.write(to: file)
        origin.route("/red.png", .ok([UInt8](red), contentType: "image/png"))
        let documents = [
            #"<image href="\#(file.absoluteString)" width="20" height="20"/>"#,
            #"<image href="\#(file.path)" width="20" height="20"/>"#,
            #"<image href="\#(origin.url("/red.png").absoluteString)" width="20" height="20"/>"#,
            #"<use href="\#(origin.url("/shapes.svg").absoluteString)#a"/>"#,
            #"<text x="0" y="15" font-size="14"><xi:include href="file:///etc/passwd" parse="text"/></text>"#,
            #"<text x="0" y="15" font-size="14"><xi:include href="/etc/passwd" parse="text"/></text>"#,
            #"<style>@import url("\#(origin.url("/style.css").absoluteString)");</style><rect width="20" height="20"/>"#,
        ]
        for body in documents {
            let svg =
                #"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xi="http://www.w3.org/2001/XInclude" width="20" height="20">\#(body)</svg>"#
            // Whatever librsvg makes of a reference it refused, nothing red and no text is drawn.
            if let image = try? CodersManager.shared.decode(Data(svg.utf8)) {
                let drawn = stride(from: 0, to: image.pixels.bytes.count, by: 4).filter { image.pixels.bytes[$0] > 0 }
                #expect(drawn.isEmpty, "drawn from outside the document: \(body)")
            }
        }
        #expect(origin.events.isEmpty, "no connection reached the loopback server")
        // The same image inline, as a data: URL, is drawn: the element works when allowed.
        let inline =
            #"<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><image href="data:image/png;base64,\#(red.base64EncodedString())" width="20" height="20"/></svg>"#
        #expect(try CodersManager.shared.decode(Data(inline.utf8)).pixels.bytes.prefix(4) == [255, 0, 0, 255])
        try await origin.shutdown()
    }

    @Test("font sizes librsvg cannot lay out are refused before it aborts the process on them")
    func hugeFontSizes() throws {
        func svg(_ body: String) -> Data {
            Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="80" height="24">\#(body)</svg>"#.utf8)
        }
        // Found by FuzzSVG: rsvg-convert itself dies on it ("assertion failed: h >= 0.0").
        let found = svg(#"<text x="4" y="17" font-family="DejaVu Sans" font-size="14202080">Web 17</text>"#)
        let nested = svg(#"<g font-size="50em"><g style="font-size: 40em"><text>x</text></g></g>"#)
        let shorthand = svg(#"<style>text { font: bold 3000in serif; }</style><text>x</text>"#)
        let exponent = svg(#"<text font-size="1.5e+7px">x</text>"#)
        for document in [found, nested, shorthand, exponent] {
            #expect(throws: WebImageError(.decodeFailed)) { try CodersManager.shared.decode(document) }
        }
        let ordinary = svg(#"<g font-size="2em"><text y="20" font-size="150%" font-weight="700">Web</text></g>"#)
        #expect(try CodersManager.shared.decode(ordinary).pixelWidth == 80)
    }

    @Test("truncated and garbled documents fail with a typed error, never a crash")
    func damagedFiles() throws {
        for name in ["viewbox.svg", "gradient.svg", "text.svg"] {
            DamagedCopies.decode(try Fixture.data("svg/" + name), cuts: 40, garbles: 40, bytes: 8)
        }
        #expect(throws: WebImageError(.decodeFailed)) {
            try CodersManager.shared.decode(Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="0" height="10"></svg>"#.utf8))
        }
    }
}
