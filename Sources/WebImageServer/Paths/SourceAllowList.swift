import Foundation
import WebImage

/// `--allowed-sources`: the URL prefixes sources may have, judged on the source and on every
/// redirect hop.
///
/// A prefix match on the text of the URL could be escaped: `http://host/f/../private/x.png` and
/// `/f/%2e%2e/private/x.png` start with `http://host/f/`, and the origin resolved the dot segments
/// to a path outside it. Here both the prefix and the URL are normalised as RFC 3986 section 6
/// says (scheme and host in lower case, the default port made explicit, percent-encoded
/// unreserved characters decoded, dot segments removed), the scheme, host and port must be equal,
/// and the path must equal the prefix's or continue it after a `/` (`/f` allows `/f/x`, not
/// `/foo`). The URL fetched is the normalised one, so the origin is asked for exactly the path
/// that was judged. Paths holding an encoded slash or backslash (`%2F`, `%5C`) are refused: an
/// origin that decodes them before resolving would see other segments than were judged.
struct SourceAllowList: Sendable {
    /// One allowed prefix, normalised.
    struct Entry: Sendable, Equatable {
        var scheme: String
        var host: String
        var port: Int
        var path: String
    }

    let entries: [Entry]

    /// The list of `prefixes`; an entry that is not an absolute http(s) URL without a query or
    /// fragment is an error (what the server refuses to start with).
    init(_ prefixes: [String]) throws(WebImageError) {
        var entries: [Entry] = []
        for prefix in prefixes {
            guard let parts = Self.normalized(prefix), !prefix.contains("?"), !prefix.contains("#") else {
                throw WebImageError(.invalidArgument, "allowed source \"\(prefix)\" is not an http(s) URL prefix without a query")
            }
            entries.append(Entry(scheme: parts.scheme, host: parts.host, port: parts.port, path: parts.path))
        }
        self.entries = entries
    }

    var isEmpty: Bool { entries.isEmpty }

    /// The normalised form of `url` when the list allows it (every URL when the list is empty),
    /// else nil.
    func allowed(_ url: URL) -> URL? {
        guard !entries.isEmpty else { return url }
        guard let parts = Self.normalized(url.absoluteString), !parts.path.contains("%2F"), !parts.path.contains("%5C"),
            !parts.path.contains("\\"),
            entries.contains(where: { entry in
                entry.scheme == parts.scheme && entry.host == parts.host && entry.port == parts.port
                    && (parts.path == entry.path || parts.path.hasPrefix(entry.path.hasSuffix("/") ? entry.path : entry.path + "/"))
            })
        else { return nil }
        return parts.url
    }

    /// A URL's parts in RFC 3986's normal form, and the URL rebuilt from them.
    private struct Parts {
        var scheme: String
        var host: String
        var port: Int
        var path: String
        var url: URL
    }

    private static func normalized(_ text: String) -> Parts? {
        guard var components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let defaultPort = ["http": 80, "https": 443][scheme], let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        let path = removingDotSegments(decodingUnreserved(components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath))
        components.scheme = scheme
        components.host = host
        components.percentEncodedPath = path
        components.fragment = nil
        let port = components.port ?? defaultPort
        if port == defaultPort { components.port = nil }
        guard let url = components.url else { return nil }
        return Parts(scheme: scheme, host: host, port: port, path: path, url: url)
    }

    /// `%XX` escapes of unreserved characters (letters, digits, `-._~`) decoded, the others with
    /// upper-case hex digits (RFC 3986 sections 6.2.2.1 and 6.2.2.2).
    static func decodingUnreserved(_ path: String) -> String {
        var output = ""
        var characters = Substring(path)
        while let percent = characters.firstIndex(of: "%") {
            output += characters[..<percent]
            let hex = characters[percent...].dropFirst().prefix(2)
            guard hex.count == 2, let value = UInt8(hex, radix: 16) else {
                output += "%"
                characters = characters[characters.index(after: percent)...]
                continue
            }
            let scalar = Unicode.Scalar(value)
            let unreserved =
                scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-._~".unicodeScalars.contains(scalar))
            output += unreserved ? String(Character(scalar)) : "%" + hex.uppercased()
            characters = characters[hex.endIndex...]
        }
        return output + characters
    }

    /// RFC 3986 section 5.2.4: `.` and `..` segments resolved, never above the root.
    static func removingDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/")
    }
}
