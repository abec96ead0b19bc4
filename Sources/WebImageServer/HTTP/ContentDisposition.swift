import Foundation
import WebImage

/// The `Content-Disposition` of an image answer, as imgproxy's `ContentDispositionValue`
/// (`httpheaders/cdv.go`) makes it: the `filename` option, else the stem of the source URL's
/// last path segment, else `image`; the result's extension, else the source's; `attachment`
/// for `return_attachment`. `"` in the name becomes `%22` as there. Two differences, both on
/// names imgproxy would garble: the source's query is not part of its name (imgproxy splits the
/// whole URL, so `a.jpg?v=1.2` has the stem `a.jpg?v=1`), and a name with other than printable
/// ASCII is also given as `filename*` (RFC 6266), its plain `filename` with `_` for each such
/// character. An SVG is always an attachment (``ImageProxy/activeContentHeaders(_:)``).
enum ContentDisposition {
    static func value(source: URL?, filename: String?, format: ImageFormat?, attachment: Bool) -> String {
        // What follows the path's last slash: nothing for a path that ends in one.
        let segment =
            source.map { String($0.path(percentEncoded: true).split(separator: "/", omittingEmptySubsequences: false).last ?? "") } ?? ""
        let sourceExtension = segment.lastIndex(of: ".").map { String(segment[$0...]) } ?? ""
        var stem = String(segment.dropLast(sourceExtension.count))
        if let filename, !filename.isEmpty { stem = filename }
        if stem.isEmpty { stem = "image" }
        let fileExtension = format.map { "." + ($0 == .jpeg ? "jpg" : $0.rawValue) } ?? sourceExtension
        let fileName = stem.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\\", with: "%5C") + fileExtension
        let ascii = String(fileName.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F ? Character($0) : "_" })
        var value = (attachment || format == .svg ? "attachment" : "inline") + "; filename=\"\(ascii)\""
        if ascii != fileName, let encoded = fileName.addingPercentEncoding(withAllowedCharacters: .alphanumerics) {
            value += "; filename*=UTF-8''\(encoded)"
        }
        return value
    }
}
