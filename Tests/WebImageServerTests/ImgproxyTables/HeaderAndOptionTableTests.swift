import Foundation
import Testing
import WebImage
@testable import WebImageServer

/// imgproxy's `Content-Disposition` table as ours: `httpheaders/cdv_test.go`
/// (`TestContentDispositionValue`) at v4 (eef3b312). Its `ext` argument is the result's format
/// here (imgproxy passes `resultData.Format().Ext()`), so a row's `ext` or `contentType` names
/// the format.
@Suite("imgproxy's tables: Content-Disposition (httpheaders/cdv_test.go)")
struct ImgproxyContentDispositionTableTests {
    @Test(
        "each row of TestContentDispositionValue",
        arguments: [
            ("BasicURL", "http://example.com/test.jpg", "", ImageFormat.jpeg, false, "inline; filename=\"test.jpg\""),
            ("EmptyFilenameWithExt", "http://example.com/path/to/", "", .png, false, "inline; filename=\"image.png\""),
            ("EmptyFilenameWithFilenameAndExt", "http://example.com/path/to/", "example", .png, false, "inline; filename=\"example.png\""),
            (
                "EmptyFilenameWithFilenameOverride", "http://example.com/path/to/", "example", .jpeg, false,
                "inline; filename=\"example.jpg\""
            ),
            ("PresentFilenameWithExtOverride", "http://example.com/path/to/face.png", "", .jpeg, false, "inline; filename=\"face.jpg\""),
            (
                "PresentFilenameWithFilenameOverride", "http://example.com/path/to/123.png", "face", .jpeg, false,
                "inline; filename=\"face.jpg\""
            ),
            ("AttachmentDisposition", "http://example.com/test.jpg", "", .jpeg, true, "attachment; filename=\"test.jpg\""),
            ("FilenameWithQuotes", "http://example.com/test.jpg", "my\"file", .png, false, "inline; filename=\"my%22file.png\""),
            ("FilenameWithContentType", "http://example.com/test", "my\"file", .png, false, "inline; filename=\"my%22file.png\""),
        ] as [(String, String, String, ImageFormat, Bool, String)])
    func row(_ name: String, _ url: String, _ filename: String, _ format: ImageFormat, _ attachment: Bool, _ expected: String) {
        let value = ContentDisposition.value(source: url, filename: filename, format: format, attachment: attachment)
        #expect(value == expected, "\(name)")
    }

    @Test("imgproxy's EmptyFilename row (no extension at all), and the two documented differences")
    func edges() {
        #expect(
            ContentDisposition.value(source: "http://example.com/path/to/", filename: nil, format: nil, attachment: false)
                == "inline; filename=\"image\"")
        // The query is not part of the name (imgproxy's filepath.Split of the whole URL keeps it).
        #expect(
            ContentDisposition.value(source: "http://a.test/photo.jpg?v=1.2", filename: nil, format: .webP, attachment: false)
                == "inline; filename=\"photo.webp\"")
        // A name beyond printable ASCII is given again as filename* (RFC 6266).
        #expect(
            ContentDisposition.value(source: nil, filename: "café", format: .png, attachment: false)
                == "inline; filename=\"caf_.png\"; filename*=UTF-8''caf%C3%A9%2Epng")
        #expect(ContentDisposition.value(source: nil, filename: nil, format: .svg, attachment: false).hasPrefix("attachment;"))
    }
}

/// Options read as imgproxy's parser reads them (`options/parser/processing_options.go` and
/// `apply.go` at v4, eef3b312), each case from its source or its `processing_options_test.go`.
@Suite("imgproxy's parser: extension, size, resize and expires")
struct ImgproxyParserRulesTests {
    let parser = OptionsParser()

    @Test("the path's extension is applied after the options and wins over format, but not with raw (parsePathOptions)")
    func extensionWins() throws {
        // TestParsePathFormat: format:webp alone.
        #expect(try parser.parse(["format:webp"]).format == .webP)
        // TestParsePlainURL: `@png` sets the format.
        #expect(try parser.parse(["size:100:100"], extensionName: "png").format == .png)
        #expect(try parser.parse(["f:webp"], extensionName: "jpg").format == .jpeg)
        #expect(try parser.parse(["raw:1", "f:webp"], extensionName: "png").format == .webP)
    }

    @Test("size takes up to 7 arguments and resize up to 8: the rest is extend's gravity and offsets (applySizeOption)")
    func sizeCarriesExtendGravity() throws {
        let sized = try parser.parse(["s:100:50:1:1:so:5:6"])
        #expect(sized.width == 100 && sized.height == 50 && sized.enlarge && sized.extend)
        #expect(sized.extendGravity == Gravity(.south, x: 5, y: 6))
        let resized = try parser.parse(["rs:fill:100:50:0:1:ea"])
        #expect(resized.resizingType == .fill && resized.extend && resized.extendGravity.kind == .east)
        #expect(throws: ProxyError.self) { try parser.parse(["s:1:2:3:4:5:6:7:8"]) }
        #expect(throws: ProxyError.self) { try parser.parse(["rs:fit:1:2:0:1:so:5:6:7"]) }
    }

    @Test("expires: a time in the past is refused, 0 or less is no expiry (applyExpiresOption)")
    func expires() throws {
        #expect(try parser.parse(["exp:0"]).expires == nil)
        #expect(try parser.parse(["exp:-5"]).expires == nil)
        #expect(try parser.parse(["exp:4102444800"]).expires == 4_102_444_800)
        #expect(throws: ProxyError.self) { try parser.parse(["exp:1000"]) }
        #expect(throws: ProxyError.self) { try parser.parse(["exp:soon"]) }
    }
}
