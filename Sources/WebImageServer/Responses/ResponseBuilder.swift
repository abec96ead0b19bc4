import Foundation
import WebImage

/// The last stage of a request: what the answer's status and headers are, as pure functions of
/// the configuration, the request and what the earlier stages found. Validators (`ETag`,
/// `Last-Modified` and the 304), `Cache-Control`, `Vary`, `Content-Disposition`, the canonical
/// `Link`, the debug and timing headers, and the refusals.
struct ResponseBuilder: Sendable {
    private let configuration: ImageServerConfiguration

    init(configuration: ImageServerConfiguration) {
        self.configuration = configuration
    }

    /// The answer with a result: a 200 with its bytes, or a 304 when the request's conditions
    /// match its validators. `timing` is the `Server-Timing` value, none when empty.
    func result(_ result: ProcessedResult, for request: ProxyRequest, timing: String) -> ProxyResponse {
        self.result(result, options: request.options, vary: request.vary, conditions: request.conditions, timing: timing)
    }

    /// ``result(_:for:timing:)`` for a path resolved before, which was answered without `Vary`.
    func result(_ result: ProcessedResult, options: ProcessingOptions, vary: [String], conditions: Conditions, timing: String)
        -> ProxyResponse
    {
        let etag = presented(etag: result.etag)
        let lastModified = presented(lastModified: result.lastModified)
        var headers = [cacheControl(options.expires)]
        if let etag { headers.append(("ETag", etag)) }
        if !vary.isEmpty { headers.append(("Vary", vary.joined(separator: ", "))) }
        if let lastModified { headers.append(("Last-Modified", lastModified)) }
        if !timing.isEmpty { headers.append(("Server-Timing", timing)) }
        if configuration.enablesDebugHeaders, let debug = result.debug { headers += debug.headers }
        // A revalidation the source answered is a 304 whatever validators came with it.
        if result.tier == .revalidated || conditions.notModified(etag: etag, lastModified: lastModified) {
            return ProxyResponse(status: 304, headers: headers, tier: result.tier)
        }
        headers += [("Content-Type", result.contentType), ("Content-Length", String(result.data.count))]
        return ProxyResponse(status: 200, headers: headers, body: result.data, tier: result.tier)
    }

    /// An `/info` answer: the JSON, or a 304 when `If-None-Match` names its (its source's) ETag.
    func info(_ result: ProcessedResult, options: InfoOptions, ifNoneMatch: String?) -> ProxyResponse {
        let etag = presented(etag: result.etag)
        var headers = [cacheControl(options.expires)]
        if let etag { headers.append(("ETag", etag)) }
        if let ifNoneMatch, let etag, Conditions.matches(ifNoneMatch, etag) {
            return ProxyResponse(status: 304, headers: headers, tier: result.tier)
        }
        headers += [("Content-Type", result.contentType), ("Content-Length", String(result.data.count))]
        return ProxyResponse(status: 200, headers: headers, body: result.data, tier: result.tier)
    }

    /// `raw`: the source's bytes as they are, typed by their sniffed format, with its `ETag` and
    /// `Last-Modified` as it sent them (imgproxy's stream handler passes them through, busters
    /// and switches aside).
    func raw(_ source: FetchedSource, format: ImageFormat, options: ProcessingOptions) -> ProxyResponse {
        let data = source.data
        let headers = [cacheControl(options.expires), ("Content-Type", format.mimeType), ("Content-Length", String(data.count))]
        return ProxyResponse(
            status: 200, headers: headers + Self.validators(source.etag, source.lastModified),
            body: data, tier: .raw)
    }

    /// `raw` when the source answered the request's conditions with a 304.
    func rawNotModified(etag: String?, lastModified: String?, options: ProcessingOptions) -> ProxyResponse {
        ProxyResponse(status: 304, headers: [cacheControl(options.expires)] + Self.validators(etag, lastModified), tier: .raw)
    }

    private static func validators(_ etag: String?, _ lastModified: String?) -> [(name: String, value: String)] {
        (etag.map { [("ETag", $0)] } ?? []) + (lastModified.map { [("Last-Modified", $0)] } ?? [])
    }

    /// The fallback image made for a request whose source failed with `error`: the fallback's own
    /// status (or the error's) and lifetime, no validators.
    func fallback(_ data: Data, format: ImageFormat, fallback: FallbackImage, error: ProxyError, for request: ProxyRequest)
        -> ProxyResponse
    {
        let maximumAge = fallback.ttl ?? Self.maximumAge(ttl: configuration.resultTTL, expires: request.options.expires)
        var headers: [(name: String, value: String)] =
            [("Cache-Control", "public, max-age=\(maximumAge)"), ("Content-Type", format.mimeType), ("Content-Length", String(data.count))]
        if !request.vary.isEmpty { headers.append(("Vary", request.vary.joined(separator: ", "))) }
        return ProxyResponse(
            status: fallback.status == 0 ? error.status.code : fallback.status, headers: headers, body: data, tier: .fallback)
    }

    /// A refusal or failure: its reason as text, kept by caches in front for the error TTL unless
    /// it is transient.
    func error(_ error: ProxyError) -> ProxyResponse {
        var headers: [(name: String, value: String)] = [("Content-Type", "text/plain; charset=utf-8")]
        let transient = [503, 504, 499].contains(error.status.code)
        headers.append(("Cache-Control", transient ? "no-store" : "public, max-age=\(configuration.errorTTL)"))
        if let retryAfter = error.retryAfter { headers.append(("Retry-After", String(retryAfter))) }
        return ProxyResponse(status: error.status.code, headers: headers, body: Data((error.reason + "\n").utf8))
    }

    /// The headers every answer about `source` gets after its stage made it: imgproxy's canonical
    /// `Link` and, for an answer with an image in it, `Content-Disposition`.
    func sourceHeaders(of response: ProxyResponse, source: @autoclosure () -> String, options: ProcessingOptions)
        -> [(name: String, value: String)]
    {
        // The source's text is asked for only when needed: a memory hit pays nothing when both are off.
        let disposition = dispositionFormat(of: response)
        guard configuration.setsCanonicalHeader || disposition != nil else { return [] }
        let text = source()
        var headers: [(name: String, value: String)] = []
        if configuration.setsCanonicalHeader, text.hasPrefix("http://") || text.hasPrefix("https://") {
            headers.append(("Link", "<\(text)>; rel=\"canonical\""))
        }
        if let disposition {
            let value = ContentDisposition.value(
                source: text, filename: options.filename, format: disposition, attachment: options.returnAttachment)
            headers.append(("Content-Disposition", value))
        }
        return headers
    }

    /// The format of an answer with an image in it (``ContentDisposition``); none for a 304 or
    /// an error.
    private func dispositionFormat(of response: ProxyResponse) -> ImageFormat? {
        guard !response.body.isEmpty, let type = response.headers.last(where: { $0.name == "Content-Type" })?.value else { return nil }
        return ImageFormat.allCases.first { $0.mimeType == type }
    }

    private func cacheControl(_ expires: Int?) -> (name: String, value: String) {
        ("Cache-Control", "public, max-age=\(Self.maximumAge(ttl: configuration.resultTTL, expires: expires))")
    }

    /// The `max-age` of a result: the TTL, cut to what is left of the URL's `expires` so that no
    /// cache in front (the nginx tier, a CDN, a browser) serves an expired URL's image on.
    static func maximumAge(ttl: Int, expires: Int?, now: Date = Date()) -> Int {
        guard let expires else { return ttl }
        return max(0, min(ttl, expires - Int(now.timeIntervalSince1970.rounded(.up))))
    }

    /// The `ETag` sent (imgproxy's `injectEtagHeader`): none when off or when the source has
    /// none, the source's own, or with a buster `"BUSTER/base64url(etag)"`.
    func presented(etag: String?) -> String? {
        guard configuration.usesETag, let etag, !etag.isEmpty else { return nil }
        guard !configuration.etagBuster.isEmpty else { return etag }
        return "\"\(configuration.etagBuster)/\(URLSigner.base64URL(Array(etag.utf8)))\""
    }

    /// The `Last-Modified` sent (imgproxy's `injectLastModifiedHeader`): none when off, when the
    /// source has none or when it is not a date; the buster when the source's is older. A
    /// result keeps only a source's date that reads (``ProcessedResult/validDate(_:)``), so
    /// without a buster nothing is parsed here, on every cache hit.
    func presented(lastModified: String?) -> String? {
        guard configuration.usesLastModified, let lastModified else { return nil }
        guard let buster = configuration.lastModifiedBuster else { return lastModified }
        guard let date = HTTPDate.parse(lastModified) else { return nil }
        return date < buster ? HTTPDate.format(buster) : lastModified
    }

    /// The policy on every proxy answer, imgproxy's (`server/responsewriter/writer.go`,
    /// `setCSP`): nothing runs and nothing loads but inline styles and `data:` images, in a
    /// sandbox. It matters for an SVG answered as SVG (`raw`, `skp:svg`,
    /// `--skip-processing-formats svg`), whose scripts, event attributes and external references
    /// would run when its URL is opened as a page; such an SVG is an attachment too
    /// (``ContentDisposition``). As an `<img>` a browser runs none of it anyway. imgproxy also
    /// sanitises the document (`IMGPROXY_SANITIZE_SVG`); this covers every way in without a
    /// second XML parser.
    static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"
}
