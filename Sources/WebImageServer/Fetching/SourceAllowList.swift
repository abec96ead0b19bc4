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
///
/// imgproxy's wildcard (`IMGPROXY_ALLOWED_SOURCES`): a `*` in the host or the path matches any
/// run of characters but `/` (`https://*.example.com/`, `https://cdn.example/*/public/`). It is
/// matched against the parsed host, never the URL's text, so imgproxy's documented pitfall (a
/// prefix without its trailing slash, `http://example.com`, allowing
/// `http://example.com@baddomain.com`) cannot happen here: the user part is not the host.
struct SourceAllowList: Sendable {
    /// One allowed prefix, normalised.
    struct Entry: Sendable, Equatable {
        var scheme: String
        var host: String
        var port: Int
        var path: String
    }

    let entries: [Entry]
    /// The `local://` entries' paths, cleaned, without their leading slash (`local:///images/` is
    /// `images`).
    let localPaths: [String]
    /// The `s3://` and `gs://` entries, as written with the scheme in lower case: a bucket's
    /// source is allowed when its text (`s3://BUCKET/KEY`, `gs://BUCKET/OBJECT`) starts with
    /// one, `*` standing for any run of characters but `/`.
    let bucketPrefixes: [String]

    /// The list of `prefixes`; an entry that is not an absolute http(s) URL without a query or
    /// fragment, or has a `*` outside its host and path, is an error (what the server refuses to
    /// start with).
    init(_ prefixes: [String]) throws(WebImageError) {
        var entries: [Entry] = []
        var localPaths: [String] = []
        var bucketPrefixes: [String] = []
        for prefix in prefixes {
            if let scheme = ["s3://", "gs://"].first(where: { prefix.lowercased().hasPrefix($0) }) {
                bucketPrefixes.append(scheme + prefix.dropFirst(5))
                continue
            }
            if prefix.lowercased().hasPrefix("local://") {
                localPaths.append(LocalFileSource.cleaned(String(prefix.dropFirst("local://".count))))
                continue
            }
            // The wildcard stands in as a token URL parsing keeps (lower case, unreserved).
            let parts = Self.normalized(prefix.replacingOccurrences(of: "*", with: Self.wildcardToken))
            guard var parts, !prefix.contains("?"), !prefix.contains("#"), !parts.scheme.contains(Self.wildcardToken) else {
                throw WebImageError(.invalidArgument, "allowed source \"\(prefix)\" is not an http(s) URL prefix without a query")
            }
            parts.host = parts.host.replacingOccurrences(of: Self.wildcardToken, with: "*")
            parts.path = parts.path.replacingOccurrences(of: Self.wildcardToken, with: "*")
            entries.append(Entry(scheme: parts.scheme, host: parts.host, port: parts.port, path: parts.path))
        }
        self.entries = entries
        self.localPaths = localPaths
        self.bucketPrefixes = bucketPrefixes
    }

    private static let wildcardToken = "xwebimagewildcardx"

    var isEmpty: Bool { entries.isEmpty && localPaths.isEmpty && bucketPrefixes.isEmpty }

    /// Whether a bucket's source (`scheme` `s3` or `gs`) is allowed: every one with an empty
    /// list, else one whose text starts with an entry of its scheme. The stores keep a key's `.`
    /// and `..` segments as they are, but a server in front of one may resolve them, so with a
    /// list a key holding one is refused.
    func allowsObject(scheme: String, bucket: String, key: String) -> Bool {
        guard !isEmpty else { return true }
        guard !key.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." }) else {
            return false
        }
        let text = Array("\(scheme)://\(bucket)/\(key)")
        return bucketPrefixes.contains { Self.starts(text[...], with: Array($0)[...]) }
    }

    /// Whether `text` starts with `prefix`, each `*` of which matches any run of characters but `/`.
    private static func starts(_ text: ArraySlice<Character>, with prefix: ArraySlice<Character>) -> Bool {
        guard let first = prefix.first else { return true }
        if first == "*" {
            var rest = text
            while true {
                if starts(rest, with: prefix.dropFirst()) { return true }
                guard let next = rest.first, next != "/" else { return false }
                rest = rest.dropFirst()
            }
        }
        guard text.first == first else { return false }
        return starts(text.dropFirst(), with: prefix.dropFirst())
    }

    /// Whether a local source's cleaned `path` is allowed: every one with an empty list, else one
    /// equal to a `local://` entry's path or under it (`*` as in a URL entry's path).
    func allowsLocal(path: String) -> Bool {
        isEmpty || localPaths.contains { $0.isEmpty || Self.path("/" + path, startsWith: "/" + $0) }
    }

    /// The normalised form of `url` when the list allows it (every URL when the list is empty),
    /// else nil.
    func allowed(_ url: URL) -> URL? {
        guard !isEmpty else { return url }
        guard let parts = Self.normalized(url.absoluteString), !parts.path.contains("%2F"), !parts.path.contains("%5C"),
            !parts.path.contains("\\"),
            entries.contains(where: { entry in
                entry.scheme == parts.scheme && entry.port == parts.port && Self.host(parts.host, matches: entry.host)
                    && Self.path(parts.path, startsWith: entry.path)
            })
        else { return nil }
        return parts.url
    }

    /// The host equals the entry's, or matches it with each `*` standing for any characters.
    private static func host(_ host: String, matches pattern: String) -> Bool {
        pattern.contains("*") ? globPrefixEnds(of: Substring(host), pattern: Substring(pattern)).contains(host.endIndex) : host == pattern
    }

    /// The path equals the entry's or continues it after a `/`; each `*` in the entry's path
    /// stands for any characters but `/`.
    private static func path(_ path: String, startsWith pattern: String) -> Bool {
        guard pattern.contains("*") else {
            return path == pattern || path.hasPrefix(pattern.hasSuffix("/") ? pattern : pattern + "/")
        }
        return globPrefixEnds(of: Substring(path), pattern: Substring(pattern)).contains { end in
            end == path.endIndex || pattern.hasSuffix("/") || path[end] == "/"
        }
    }

    /// Where the prefixes of `text` that match `pattern` end (`*` matches a run without `/`).
    /// The set of positions reachable after each pattern character, kept as flags: linear in
    /// the text for each pattern character, whatever the URL (a backtracking match would be a
    /// request's way to spend a node's time).
    private static func globPrefixEnds(of text: Substring, pattern: Substring) -> [String.Index] {
        let characters = Array(text)
        var reachable = [Bool](repeating: false, count: characters.count + 1)
        reachable[0] = true
        for symbol in pattern {
            var next = [Bool](repeating: false, count: characters.count + 1)
            if symbol == "*" {
                var open = false
                for position in 0...characters.count {
                    open = open || reachable[position]
                    next[position] = open
                    if position < characters.count, characters[position] == "/" { open = false }
                }
            } else {
                for position in 0..<characters.count where reachable[position] && characters[position] == symbol {
                    next[position + 1] = true
                }
            }
            reachable = next
        }
        return reachable.indices.filter { reachable[$0] }.map { text.index(text.startIndex, offsetBy: $0) }
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
