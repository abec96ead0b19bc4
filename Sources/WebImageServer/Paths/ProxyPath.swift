package import Foundation
import WebImageGCS
import WebImageS3

/// A request path in imgproxy's format, split into its parts:
///
/// ```
/// /%signature/%options/plain/%source_url@%extension
/// /%signature/%options/%base64url_source.%extension
/// ```
///
/// Options are the segments that contain a `:` (base64url never does); `plain` starts a plain
/// source, which runs to the end of the path, percent-escaped where it has `?`, `#` or `@`; any
/// other segment starts a base64url source, which may be split by `/` into chunks. The extension
/// is optional in both forms.
package struct ProxyPath: Sendable, Equatable {
    /// The first segment: the signature, or anything (`unsafe`) when signing is off.
    package var signature: Substring
    /// Everything after the signature segment, leading `/` included: what the signature signs.
    package var signedPath: Substring
    /// The option segments in order, as written (`rs:fill:300:200`).
    package var options: [Substring]
    /// The source image's URL.
    package var source: URL
    /// The extension the URL asks for (`webp`), lowercased; nil when it names none.
    package var extensionName: String?

    /// The scheme of sources the server holds itself rather than fetches (`local:///playground/
    /// scene.jpg`, as imgproxy names local sources): the playground's demo images.
    package static let localScheme = "local"

    /// Splits a raw (still percent-encoded) request path.
    /// - Throws: ``ProxyError`` 404 for a path without a signature and a source, 400 for a
    ///   source that is not valid base64url, not a URL, or not http(s) (or ``localScheme``).
    package init(parsing path: Substring, rules: Rules = Rules()) throws(ProxyError) {
        guard path.first == "/" else { throw .notFound("a proxy path starts with /") }
        let afterSlash = path.dropFirst()
        guard let signatureEnd = afterSlash.firstIndex(of: "/"), signatureEnd > afterSlash.startIndex else {
            throw .notFound("expected /SIGNATURE/OPTIONS/SOURCE")
        }
        signature = afterSlash[..<signatureEnd]
        signedPath = Self.redenormalized(afterSlash[signatureEnd...]).map { Substring($0) } ?? afterSlash[signatureEnd...]
        var options: [Substring] = []
        var rest = signedPath.dropFirst()
        var sourceText: String?
        var extensionName: Substring?
        if rules.onlyPresets {
            // imgproxy's IMGPROXY_ONLY_PRESETS: the first segment names presets, `:`-separated.
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            options.append(Substring("pr" + rules.argumentsSeparator + rest[..<end]))
            rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
        }
        while !rest.isEmpty {
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            let segment = rest[..<end]
            if segment == "plain" {
                let plain = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
                let split = Self.splitExtension(plain, at: "@")
                // Foundation's unescaping took a third of a cache hit's parsing; most sources have no escape.
                guard let decoded = split.body.contains("%" as Character) ? split.body.removingPercentEncoding : String(split.body) else {
                    throw .badRequest("the plain source URL has a bad percent escape")
                }
                sourceText = decoded
                extensionName = split.extension
                break
            } else if !rules.onlyPresets, segment.contains(rules.argumentsSeparator) {
                options.append(segment)
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
            } else {
                // imgproxy's IMGPROXY_BASE64_URL_INCLUDES_FILENAME: a last segment after the
                // encoded URL is a file name for the browser, not part of the source.
                let encoded = rules.base64IncludesFilename ? rest[..<(rest.lastIndex(of: "/") ?? rest.endIndex)] : rest
                let split = Self.splitExtension(encoded, at: ".")
                let joined = split.body.split(separator: "/").joined()
                guard let bytes = URLSigner.bytes(base64URL: joined), let text = String(bytes: bytes, encoding: .utf8) else {
                    throw .badRequest("the source is not valid URL-safe base64")
                }
                sourceText = text
                extensionName = split.extension
                break
            }
        }
        guard let decoded = sourceText, !decoded.isEmpty else { throw .notFound("the path names no source image") }
        let source = rules.rewriting.apply(decoded)
        self.options = options
        let scheme = source.prefix(5).lowercased()
        self.source =
            try scheme == "s3://"
            ? Self.s3Source(source, rules: rules) : scheme == "gs://" ? Self.gcsSource(source, rules: rules) : Self.sourceURL(source)
        self.extensionName = extensionName.map { $0.lowercased() }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// What proxies and browsers undid, restored as imgproxy's `RedenormalizePath` restores it
    /// (`handlers/path.go`), before the signature is checked: `%3A` in the options made `:`
    /// again, and a plain source's `scheme:/host` (a collapsed `//`) made `scheme://host`
    /// (`local:///` for `local:/`). imgproxy's pattern is greedy, so it would also change a
    /// `…/a:/b` inside a whole URL; here only the scheme at the start is restored. Nil when
    /// nothing changes, the common case, which costs one scan.
    static func redenormalized(_ path: Substring) -> String? {
        guard mayNeedRedenormalizing(path.utf8) else { return nil }
        let body = path.dropFirst()
        let options: Substring
        let plain: Substring?
        if body.hasPrefix("plain/") {
            (options, plain) = ("", body.dropFirst(6))
        } else if let marker = body.range(of: "/plain/") {
            (options, plain) = (body[..<marker.lowerBound], body[marker.upperBound...])
        } else {
            (options, plain) = (body, nil)
        }
        let fixedPlain = plain.flatMap(restoredScheme)
        guard options.contains("%3A") || fixedPlain != nil else { return nil }
        let restoredOptions = options.replacingOccurrences(of: "%3A", with: ":")
        guard let plain else { return "/" + restoredOptions }
        return "/" + (restoredOptions.isEmpty ? "" : restoredOptions + "/") + "plain/" + (fixedPlain ?? String(plain))
    }

    /// Whether the path holds `%3A` or a `:/` not followed by `/`: one pass over its bytes, which
    /// a path with neither (nearly every one) costs and nothing more.
    private static func mayNeedRedenormalizing(_ bytes: Substring.UTF8View) -> Bool {
        var previous: (UInt8, UInt8) = (0, 0)
        for byte in bytes {
            if previous == (UInt8(ascii: "%"), UInt8(ascii: "3")), byte == UInt8(ascii: "A") { return true }
            if previous == (UInt8(ascii: ":"), UInt8(ascii: "/")), byte != UInt8(ascii: "/") { return true }
            previous = (previous.1, byte)
        }
        return false
    }

    /// `scheme:/X…` (X not `/`) as `scheme://X…`, or `local:///X…`; nil when the source does not
    /// start so.
    private static func restoredScheme(_ plain: Substring) -> String? {
        guard let colon = plain.firstIndex(of: ":"), colon > plain.startIndex,
            plain[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        let afterColon = plain[plain.index(after: colon)...]
        guard afterColon.hasPrefix("/"), afterColon.dropFirst().first.map({ $0 != "/" }) == true else { return nil }
        let scheme = plain[..<colon]
        return scheme + (scheme == "local" ? ":///" : "://") + afterColon.dropFirst()
    }

    /// An http(s) source, or a ``localScheme`` one, its scheme in lower case: every later step
    /// compares the scheme as written (`LOCAL:///` went to the HTTP client).
    private static func sourceURL(_ source: String) throws(ProxyError) -> URL {
        guard let url = URL(string: source), let written = url.scheme, case let scheme = written.lowercased(),
            ["http", "https"].contains(scheme) ? !(url.host ?? "").isEmpty : scheme == Self.localScheme && !url.path.isEmpty
        else {
            throw .badRequest("the source \"\(Self.shortened(source))\" is not an http(s) URL")
        }
        guard written != scheme else { return url }
        return URL(string: scheme + source.dropFirst(written.count)) ?? url
    }

    /// An `s3://BUCKET/KEY` source as imgproxy reads one: the key taken as written (no
    /// percent-decoding, leading slashes dropped), cut at the query separator, after which
    /// comes the version (`s3://b/k?VERSION`); returned as ``S3Location/url``, the form the
    /// library's S3 loader takes.
    /// - Throws: 400 when S3 sources are off; 404 for an empty bucket or key, as imgproxy.
    static func s3Source(_ text: String, rules: Rules) throws(ProxyError) -> URL {
        guard rules.allowsS3 else { throw .badRequest("s3:// sources are not enabled here (IMGPROXY_USE_S3)") }
        let (bucket, key, version) = bucketSource(text, rules: rules)
        guard !bucket.isEmpty, !key.isEmpty else { throw .notFound("the S3 source names no bucket or no key") }
        return S3Location(bucket: bucket, key: key, versionID: version.flatMap { $0.isEmpty ? nil : $0 }).url
    }

    /// A `gs://BUCKET/OBJECT` source as imgproxy's GCS storage reads one: as an `s3://` one, the
    /// text after the query separator being the object's generation (a number; anything else
    /// names the live object, as imgproxy ignores it); returned as ``GCSLocation/url``.
    /// - Throws: 400 when GCS sources are off; 404 for an empty bucket or object, as imgproxy.
    static func gcsSource(_ text: String, rules: Rules) throws(ProxyError) -> URL {
        guard rules.allowsGCS else { throw .badRequest("gs:// sources are not enabled here (IMGPROXY_USE_GCS)") }
        let (bucket, object, generation) = bucketSource(text, rules: rules)
        guard !bucket.isEmpty, !object.isEmpty else { throw .notFound("the GCS source names no bucket or no object") }
        return GCSLocation(bucket: bucket, object: object, generation: generation.flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }).url
    }

    /// `SCHEME://BUCKET/KEY?QUERY` split as imgproxy splits a bucket's source: the key as written
    /// (leading slashes dropped), cut at the query separator.
    private static func bucketSource(_ text: String, rules: Rules) -> (bucket: String, key: String, query: String?) {
        let rest = text.dropFirst(5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let bucket = String(rest[..<slash])
        var key = slash < rest.endIndex ? String(rest[rest.index(after: slash)...].drop { $0 == "/" }) : ""
        var query: String?
        if !rules.querySeparator.isEmpty, let cut = key.range(of: rules.querySeparator) {
            query = String(key[cut.upperBound...])
            key = String(key[..<cut.lowerBound])
        }
        return (bucket, key, query)
    }

    /// How a server reads its paths, beyond imgproxy's URL format itself.
    package struct Rules: Sendable, Equatable {
        /// What is done to the source URL first (`IMGPROXY_URL_REPLACEMENTS`, `IMGPROXY_BASE_URL`).
        package var rewriting = SourceRewriting()
        /// A base64 source is followed by a file name segment to ignore
        /// (`IMGPROXY_BASE64_URL_INCLUDES_FILENAME`).
        package var base64IncludesFilename = false
        /// The options part is one segment of preset names (`IMGPROXY_ONLY_PRESETS`).
        package var onlyPresets = false
        /// What separates an option's name and arguments: a segment holding it is an option
        /// (`IMGPROXY_ARGUMENTS_SEPARATOR`). Default `:`.
        package var argumentsSeparator = ":"
        /// Whether `s3://` sources are read (`IMGPROXY_USE_S3`).
        package var allowsS3 = false
        /// Whether `gs://` sources are read (`IMGPROXY_USE_GCS`).
        package var allowsGCS = false
        /// What ends an `s3://` source's key and starts its version
        /// (`IMGPROXY_SOURCE_URL_QUERY_SEPARATOR`); empty: the whole rest is the key.
        package var querySeparator = "?"

        /// The rules of imgproxy's defaults: none.
        package init(
            rewriting: SourceRewriting = SourceRewriting(), base64IncludesFilename: Bool = false, onlyPresets: Bool = false,
            argumentsSeparator: String = ":"
        ) {
            self.rewriting = rewriting
            self.base64IncludesFilename = base64IncludesFilename
            self.onlyPresets = onlyPresets
            self.argumentsSeparator = argumentsSeparator
        }
    }

    /// The text before the last `separator` and what follows it, when what follows has no `/`.
    private static func splitExtension(_ text: Substring, at separator: Character) -> (body: Substring, extension: Substring?) {
        guard let index = text.lastIndex(of: separator) else { return (text, nil) }
        let suffix = text[text.index(after: index)...]
        guard !suffix.contains("/" as Character) else { return (text, nil) }
        return (text[..<index], suffix)
    }

    /// What `/status` shows of a path after its signature: the options and the source's scheme,
    /// host and port. Never its user, password, path or query, which can hold secrets (tokens in
    /// a query, credentials in the user part).
    static func redacted(_ unsigned: String) -> String {
        guard let parsed = try? ProxyPath(parsing: Substring("/-" + unsigned)) else { return "(not a proxy path)" }
        return (["" as Substring] + parsed.options).joined(separator: "/") + "/" + origin(of: parsed.source) + "/…"
    }

    /// `SCHEME://HOST:PORT` of a source, `?` for a part it lacks.
    private static func origin(of source: URL) -> String {
        let origin = (source.scheme ?? "?") + "://" + (source.host ?? "?")
        return source.port.map { origin + ":\($0)" } ?? origin
    }

    /// A path after its signature as logs and spans show it: as it came when its source has no
    /// user, password or query (which is what an operator greps for), else its options and its
    /// source as `plain/SCHEME://HOST:PORT/PATH` with the query as `?…` (a base64 source too,
    /// whose text hides nothing from whoever decodes it). Credentials in the user part and tokens
    /// in a query are the secrets sources carry; `/status`, a page, shows less (``redacted(_:)``).
    static func withoutSecrets(_ unsigned: String) -> String {
        guard let parsed = try? ProxyPath(parsing: Substring("/-" + unsigned)) else { return "(not a proxy path)" }
        let source = parsed.source
        guard source.user != nil || source.password != nil || source.query != nil else { return unsigned }
        let shown = origin(of: source) + source.path(percentEncoded: true) + (source.query == nil ? "" : "?…")
        return (["" as Substring] + parsed.options).joined(separator: "/") + "/plain/" + shown
    }

    /// At most 100 characters of a source, for error messages.
    static func shortened(_ text: String) -> String {
        text.count > 100 ? String(text.prefix(100)) + "…" : text
    }
}
