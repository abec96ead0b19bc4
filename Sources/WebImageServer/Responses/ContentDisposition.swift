import Foundation
import WebImage

/// The `Content-Disposition` of an image answer, as imgproxy's `ContentDispositionValue`
/// (`httpheaders/cdv.go`) makes it: the `filename` option, else the stem of what follows the
/// source URL's last `/`, else `image`; the result's extension, else the source's; `attachment`
/// for `return_attachment`. `"` in the name becomes `%22` as there. Two differences, both on
/// names imgproxy would garble: the source's query is not part of its name (imgproxy splits the
/// whole URL, so `a.jpg?v=1.2` has the stem `a.jpg?v=1`), and a name with other than printable
/// ASCII is also given as `filename*` (RFC 6266), its plain `filename` with `_` for each such
/// character. An SVG is always an attachment (``ResponseBuilder/contentSecurityPolicy``).
enum ContentDisposition {
    /// `source` is the source URL's text, as the result's key holds it: read as text, it costs
    /// a cache hit no URL parsing.
    static func value(source: String?, filename: String?, format: ImageFormat?, attachment: Bool) -> String {
        let withoutQuery = source.map { $0.prefix { $0 != "?" && $0 != "#" } } ?? ""
        let segment = withoutQuery.lastIndex(of: "/").map { withoutQuery[withoutQuery.index(after: $0)...] } ?? withoutQuery
        let sourceExtension = segment.lastIndex(of: ".").map { segment[$0...] } ?? ""
        var stem = String(segment.dropLast(sourceExtension.count))
        if let filename, !filename.isEmpty { stem = filename }
        if stem.isEmpty { stem = "image" }
        if stem.contains("\"") || stem.contains("\\") {
            stem = stem.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\\", with: "%5C")
        }
        let fileName = stem + (format.map { "." + $0.preferredFileExtension } ?? String(sourceExtension))
        let kind = attachment || format == .svg ? "attachment" : "inline"
        guard !fileName.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return kind + "; filename=\"\(fileName)\"" }
        let ascii = String(fileName.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F ? Character($0) : "_" })
        var value = kind + "; filename=\"\(ascii)\""
        if let encoded = fileName.addingPercentEncoding(withAllowedCharacters: .alphanumerics) {
            value += "; filename*=UTF-8''\(encoded)"
        }
        return value
    }
}
