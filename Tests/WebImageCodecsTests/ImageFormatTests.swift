import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

@Suite("ImageFormat")
struct ImageFormatTests {
    private func sniff(_ bytes: [UInt8]) -> ImageFormat? {
        ImageFormat(sniffing: bytes)
    }

    private func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("the first byte decides, as in SDWebImage")
    func firstByte() {
        #expect(sniff([0xFF, 0xD8, 0xFF]) == .jpeg)
        #expect(sniff([0xFF]) == .jpeg)
        #expect(sniff([0x89, 0x50, 0x4E, 0x47]) == .png)
        #expect(sniff(ascii("GIF89a")) == .gif)
        #expect(sniff(ascii("II*\0")) == .tiff)
        #expect(sniff(ascii("MM\0*")) == .tiff)
        #expect(sniff(ascii("%PDF-1.7")) == .pdf)
        #expect(sniff(ascii("%PS")) == nil)
    }

    @Test("WebP needs RIFF and WEBP within the first 12 bytes")
    func webP() {
        #expect(sniff(ascii("RIFF\u{10}\0\0\0WEBPVP8 ")) == .webP)
        #expect(sniff(ascii("RIFF\u{10}\0\0\0WEBP")) == .webP)
        #expect(sniff(ascii("RIFF\u{10}\0\0\0WEB")) == nil, "11 bytes are not enough")
        #expect(sniff(ascii("RIFF\u{10}\0\0\0WAVE")) == nil)
    }

    @Test("empty and unknown data are not images")
    func unknown() {
        #expect(sniff([]) == nil)
        #expect(sniff(ascii("<!DOCTYPE html><html></html>")) == nil)
        #expect(sniff([0x01, 0x02, 0x03]) == nil)
    }

    @Test("SVG: the first element is svg (a prefix aside), after a BOM, white space, declaration, comments and doctype")
    func svg() {
        #expect(sniff(ascii("<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>\n")) == .svg)
        #expect(sniff(ascii("<?xml version=\"1.0\"?><svg>" + String(repeating: " ", count: 500) + "</svg>")) == .svg)
        #expect(sniff(ascii("<svg></svg>" + String(repeating: " ", count: 200))) == .svg, "whatever follows the document")
        let prolog =
            "\n  <?xml version=\"1.0\"?>\n<!-- made by hand -->\n"
            + "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"x.dtd\" [ <!ENTITY a \"b\"> ]>\n<svg width=\"1\"/>"
        #expect(sniff([0xEF, 0xBB, 0xBF] + ascii(prolog)) == .svg)
        #expect(sniff(ascii("<svg\nwidth=\"1\">")) == .svg, "a document cut short is still one")
        #expect(sniff(ascii("<svgx></svgx>")) == nil)
        #expect(sniff(ascii("<SVG></SVG>")) == nil, "XML names are case-sensitive")
        #expect(sniff(ascii("<html><body><svg></svg></body></html>")) == nil, "an inline svg does not make a page an SVG file")
        #expect(sniff(ascii("<!-- never closed <svg>")) == nil)
    }

    private func box(major: String, compatible: [String] = []) -> [UInt8] {
        let size = 16 + 4 * compatible.count
        return [0, 0, 0, UInt8(size)] + ascii("ftyp" + major + "\0\0\0\0" + compatible.joined())
    }

    @Test("ISO base media brands: HEIC, HEIF and AVIF; MP4's and QuickTime's")
    func isoBrands() {
        for brand in ["heic", "heix", "hevc", "hevx"] { #expect(sniff(box(major: brand)) == .heic) }
        #expect(sniff(box(major: "mif1")) == .heif)
        #expect(sniff(box(major: "msf1")) == .heif)
        #expect(sniff(box(major: "avif")) == .avif)
        #expect(sniff(box(major: "avis")) == .avif)
        #expect(sniff(box(major: "mif1", compatible: ["miaf", "avif"])) == .avif, "AVIF files often carry mif1 first")
        #expect(sniff(box(major: "mp42", compatible: ["isom"])) == .mp4)
        #expect(sniff(box(major: "isom", compatible: ["iso2", "avc1", "mp41"])) == .mp4, "what ffmpeg writes")
        #expect(sniff(box(major: "qt  ")) == .quickTime)
        #expect(sniff(box(major: "crx ")) == nil, "Canon's raw photographs are ISO base media too")
    }

    @Test("BMP, ICO and JPEG XL")
    func extraFormats() {
        #expect(sniff(ascii("BM6\0")) == .bmp)
        #expect(sniff(ascii("BA")) == nil)
        #expect(sniff([0, 0, 1, 0, 1, 0]) == .ico)
        #expect(sniff([0xFF, 0x0A, 0x00]) == .jpegXL)
        #expect(sniff([0, 0, 0, 0x0C] + ascii("JXL \r\n") + [0x87, 0x0A]) == .jpegXL)
    }

    @Test("the checked-in fixtures are recognised")
    func fixtures() throws {
        let expected: [String: ImageFormat] = [
            "gradient.jpg": .jpeg, "gradient-progressive.jpg": .jpeg, "gradient-rgba.png": .png,
            "gradient-interlaced.png": .png, "animated.gif": .gif, "gradient-lossy.webp": .webP,
            "gradient-lossless.webp": .webP,
        ]
        for (name, format) in expected {
            #expect(ImageFormat(sniffing: try Fixture.data(name)) == format, "\(name)")
        }
    }

    @Test("MIME types map both ways, ignoring case and parameters")
    func mimeTypes() {
        for format in ImageFormat.allCases {
            #expect(ImageFormat(mimeType: format.mimeType) == format)
        }
        #expect(ImageFormat(mimeType: "IMAGE/JPEG; charset=binary") == .jpeg)
        #expect(ImageFormat(mimeType: "image/jpg") == .jpeg)
        #expect(ImageFormat(mimeType: "image/vnd.microsoft.icon") == .ico)
        #expect(ImageFormat(mimeType: "text/html") == nil)
        #expect(ImageFormat.webP.mimeType == "image/webp")
    }

    @Test("file extensions map both ways")
    func fileExtensions() {
        for format in ImageFormat.allCases {
            #expect(ImageFormat(fileExtension: format.preferredFileExtension) == format)
        }
        #expect(ImageFormat(fileExtension: ".JPEG") == .jpeg)
        #expect(ImageFormat(fileExtension: "tif") == .tiff)
        #expect(ImageFormat(fileExtension: "txt") == nil)
        #expect(ImageFormat.jpegXL.preferredFileExtension == "jxl")
    }
}
