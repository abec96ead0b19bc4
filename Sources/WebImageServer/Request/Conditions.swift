import Foundation
import WebImage

/// A request's conditional headers, as imgproxy v4 answers them
/// (`httpheaders/conditionalheaders/request.go`): each validator only when the server sends it,
/// since an ETag never sent cannot be matched; what the source is asked (``forwarded``) with
/// the busters taken off.
struct Conditions: Sendable {
    var ifNoneMatch: String?
    var ifModifiedSince: String?
    /// What the source is asked with (imgproxy's `InjectImageRequestHeaders`): `If-None-Match`
    /// without the ETag buster's wrapping, `If-Modified-Since` when no buster is set or it is
    /// later than the buster. None at all when a buster is set and the request's `If-None-Match`
    /// is not in its form: that client's copy predates the buster.
    var forwarded: HTTPValidators?
    /// What a `raw` request asks its source with: the request's `If-None-Match` and
    /// `If-Modified-Since` as they came, whatever the switches and busters (imgproxy's stream
    /// handler passes them through, `handlers/stream/config.go`).
    var passedThrough: HTTPValidators?

    /// A request's `If-None-Match` and `If-Modified-Since`, each kept when the server sends its
    /// validator.
    init(ifNoneMatch: String?, ifModifiedSince: String?, answeredBy configuration: ImageServerConfiguration) {
        let (ifNoneMatch, ifModifiedSince) = (
            ifNoneMatch.flatMap { $0.isEmpty ? nil : $0 }, ifModifiedSince.flatMap { $0.isEmpty ? nil : $0 }
        )
        passedThrough = HTTPValidators(etag: ifNoneMatch, lastModified: ifModifiedSince)
        self.ifNoneMatch = configuration.usesETag ? ifNoneMatch : nil
        self.ifModifiedSince = configuration.usesLastModified ? ifModifiedSince : nil
        forwarded = Self.forwarded(
            ifNoneMatch: self.ifNoneMatch, ifModifiedSince: self.ifModifiedSince, etagBuster: configuration.etagBuster,
            lastModifiedBuster: configuration.lastModifiedBuster)
    }

    /// Whether an answer with these validators (as sent) is a 304, judged as a source judges
    /// the conditions it is asked with (``unchanged(asked:etag:lastModified:)``).
    func notModified(etag: String?, lastModified: String?) -> Bool {
        guard let asked = HTTPValidators(etag: ifNoneMatch, lastModified: ifModifiedSince) else { return false }
        return Self.unchanged(asked: asked, etag: etag, lastModified: lastModified)
    }

    /// Whether a source whose own validators are `etag` and `lastModified` is unchanged for the
    /// validators it is `asked` with, as imgproxy's storages judge them
    /// (`storage/common/notmodified.go`): the ETag when both sides have one (RFC 9110 13.2.2:
    /// `If-None-Match` before `If-Modified-Since`), else the dates.
    static func unchanged(asked: HTTPValidators, etag: String?, lastModified: String?) -> Bool {
        if let tag = asked.etag, let etag { return matches(tag, etag) }
        guard let since = asked.lastModified.flatMap(HTTPDate.parse), let modified = lastModified.flatMap(HTTPDate.parse) else {
            return false
        }
        return modified <= since
    }

    /// Whether an `If-None-Match` list names `etag` (or is `*`); weak and strong forms compare
    /// equal, as imgproxy's `UnquoteEtag` makes them.
    static func matches(_ ifNoneMatch: String, _ etag: String) -> Bool {
        let wanted = unquoted(etag)
        return ifNoneMatch.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || unquoted(tag) == wanted
        }
    }

    /// An ETag without its weak prefix and quotes (imgproxy's `UnquoteEtag`).
    static func unquoted(_ etag: some StringProtocol) -> Substring {
        var tag = Substring(etag)
        if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
        while tag.first == "\"" { tag = tag.dropFirst() }
        while tag.last == "\"" { tag = tag.dropLast() }
        return tag
    }

    /// imgproxy's `computeEtag` and `computeIfModifiedSince`.
    static func forwarded(ifNoneMatch: String?, ifModifiedSince: String?, etagBuster: String, lastModifiedBuster: Date?)
        -> HTTPValidators?
    {
        var etag = ifNoneMatch
        if let ifNoneMatch, !etagBuster.isEmpty {
            // A tag the buster did not wrap, or whose wrapping is not base64url: no condition is
            // sent at all, so the client gets the current image.
            guard let rest = unquoted(ifNoneMatch).stripping(prefix: etagBuster + "/"),
                let bytes = URLSigner.bytes(base64URL: rest)
            else { return nil }
            etag = String(decoding: bytes, as: UTF8.self)
        }
        var since = ifModifiedSince
        if let ifModifiedSince, let lastModifiedBuster {
            // A date not after the buster (or not a date) asks for a copy made before it.
            if HTTPDate.parse(ifModifiedSince).map({ lastModifiedBuster < $0 }) != true { since = nil }
        }
        return HTTPValidators(etag: etag, lastModified: since)
    }
}

extension Substring {
    /// The rest after `prefix`, nil when it does not start with it.
    fileprivate func stripping(prefix: String) -> Substring? {
        hasPrefix(prefix) ? dropFirst(prefix.count) : nil
    }
}
