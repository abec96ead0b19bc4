import Foundation
import Mustache
import WebImage

/// The server's two pages: `/playground` (off unless configured, loopback or token only) and
/// `/status` (on by default), rendered from ``PageTemplates`` with swift-mustache.
final class ServerPages: Sendable {
    /// What a page request needs beyond its path.
    struct Request: Sendable {
        var path: Substring
        var query: String?
        var peerAddress: String?
        var forwarding = PageAccess.Forwarding()
        /// `X-Playground-Token` for the playground, `X-Status-Token` for the status page.
        var tokenHeader: String?
    }

    private let configuration: ImageServerConfiguration
    private let library: MustacheLibrary
    private let metrics: ServerMetrics
    private let demos: DemoSources?
    private let signer: URLSigner?
    private let formats: [String]
    private let summary: [[String: String]]
    /// The port once bound (the configuration may say 0).
    private let boundPort = Locked<Int?>(nil)

    init(configuration: ImageServerConfiguration, demos: DemoSources?, metrics: ServerMetrics, encodableFormats: Set<ImageFormat>)
        throws(WebImageError)
    {
        self.configuration = configuration
        self.demos = demos
        self.metrics = metrics
        var library = MustacheLibrary()
        do {
            try library.register(PageTemplates.head, named: "head")
            try library.register(PageTemplates.playground, named: "playground")
            try library.register(PageTemplates.status, named: "status")
            try library.register(PageTemplates.figures, named: "figures")
        } catch {
            throw WebImageError(.invalidArgument, "a page template does not parse: \(error)")
        }
        self.library = library
        signer =
            configuration.signingKeys.isEmpty ? nil : URLSigner(keys: configuration.signingKeys, signatureSize: configuration.signatureSize)
        formats = ImageFormat.allCases.filter { encodableFormats.contains($0) }.map { $0 == .jpeg ? "jpg" : $0.rawValue }
        summary = Self.summary(configuration)
    }

    /// The answer for a page route, or nil when `path` is not one of the pages that are on (a 404).
    func respond(to request: Request, metrics: () -> MetricsReading) -> ProxyResponse? {
        switch request.path {
        case "/playground", "/playground/":
            guard configuration.playground else { return nil }
            return guarded(request, PageAccess.playgroundPage, token: configuration.playgroundToken) {
                html(render("playground", playgroundContext()))
            }
        case "/playground/sign":
            guard configuration.playground else { return nil }
            return guarded(request, PageAccess.playgroundPage, token: configuration.playgroundToken) { sign(query: request.query) }
        case "/status":
            guard configuration.statusPage else { return nil }
            return guarded(request, PageAccess.statusPage, token: configuration.statusToken) {
                html(render("status", statusContext(metrics())))
            }
        case "/status/figures":
            guard configuration.statusPage else { return nil }
            return guarded(request, PageAccess.statusPage, token: configuration.statusToken) {
                html(render("figures", statusContext(metrics())))
            }
        default:
            guard configuration.playground, request.path.hasPrefix("/playground/demo/"), let demos else { return nil }
            guard let source = demos.source(path: "/playground/" + request.path.dropFirst("/playground/demo/".count)) else {
                return text(404, "no such demo image")
            }
            return ProxyResponse(
                status: 200, headers: [("Content-Type", source.contentType), ("Cache-Control", "public, max-age=3600")], body: source.data)
        }
    }

    /// Records the port the server listens on, for `/status`.
    func listening(on port: Int) {
        boundPort.withLock { $0 = port }
    }

    // MARK: - Playground

    private func guarded(
        _ request: Request, _ page: (name: String, option: String, header: String), token: String?, _ answer: () -> ProxyResponse
    ) -> ProxyResponse {
        let presented = request.tokenHeader ?? Self.queryItem("token", in: request.query)
        let client = PageAccess.client(
            peer: request.peerAddress, forwarding: request.forwarding, trustedProxies: configuration.trustedProxies,
            header: configuration.clientIPHeader)
        switch PageAccess.decide(page, clientAddress: client.address, forwarded: client.forwarded, token: token, presented: presented) {
        case .allowed: return answer()
        case .refused(let reason): return text(403, reason)
        }
    }

    private func playgroundContext() -> [String: Any] {
        [
            "title": "playground", "version": WebImageRelease.version, "signs": signer != nil, "unsafe": configuration.allowsUnsigned,
            "formats": formats,
            "demos": (demos?.sources ?? []).map { ["name": $0.name, "label": $0.label, "url": $0.url] },
        ]
    }

    /// `{"path": ..., "signed": "/SIGNATURE/...", "unsafe": "/unsafe/..."}`, each URL present when
    /// the node would accept it.
    private func sign(query: String?) -> ProxyResponse {
        guard let path = Self.queryItem("path", in: query), path.hasPrefix("/"), path.utf8.count <= 8192 else {
            return text(400, "give the path to sign: /playground/sign?path=/OPTIONS/SOURCE")
        }
        var answer: [String: String] = ["path": path]
        if let signer { answer["signed"] = signer.sign(path) }
        if configuration.allowsUnsigned { answer["unsafe"] = "/unsafe" + path }
        let body = (try? JSONSerialization.data(withJSONObject: answer, options: [.sortedKeys])) ?? Data("{}".utf8)
        return ProxyResponse(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")], body: body)
    }

    // MARK: - Status

    private func statusContext(_ reading: MetricsReading) -> [String: Any] {
        let now = metrics.secondsSinceStart
        let snapshot = metrics.board.snapshot(now: now)
        let statuses = reading.samples(named: "webimage_server_requests_total").filter { $0.value > 0 }
            .sorted { ($0.labels["status"] ?? "") < ($1.labels["status"] ?? "") }
        let lookups = "webimage_server_cache_lookups_total"
        let tierHits = ["path", "result-memory", "result"].map { ($0, reading.value(lookups, ["tier": $0, "result": "hit"])) }
        let misses = reading.value(lookups, ["tier": "result", "result": "miss"])
        let lookupCount = tierHits.reduce(misses) { $0 + $1.1 }
        let share = { (count: Double) in lookupCount > 0 ? String(format: "%.1f%%", count / lookupCount * 100) : "–" }
        let milliseconds = { (value: Double?) in value.map { String(format: "%.1f ms", $0) } ?? "–" }
        return [
            "title": "status", "version": WebImageRelease.version, "uptime": Self.duration(now),
            "listen": "\(configuration.host):\(boundPort.withLock { $0 } ?? configuration.port)",
            "configuration": summary,
            "perSecondLastMinute": String(format: "%.2f", snapshot.perSecondLastMinute),
            "perSecondLastFiveMinutes": String(format: "%.2f", snapshot.perSecondLastFiveMinutes),
            "requestsTotal": Self.integer(statuses.reduce(0) { $0 + $1.value }),
            "statuses": statuses.map { ["status": $0.labels["status"] ?? "?", "count": Self.integer($0.value)] },
            "minutes": snapshot.minutes.enumerated().map { index, classes in
                [
                    "label": index == 0 ? "this minute" : "\(index) min ago", "ok": classes[1], "redirect": classes[2],
                    "client": classes[3], "server": classes[4],
                ]
            },
            "p50": milliseconds(snapshot.p50), "p95": milliseconds(snapshot.p95), "p99": milliseconds(snapshot.p99),
            "running": Self.integer(reading.value("webimage_server_requests_running")),
            "queued": Self.integer(reading.value("webimage_server_requests_queued")),
            "processed": Self.integer(reading.value("webimage_server_processing_duration_seconds_count")),
            "tiers": tierHits.map { ["tier": $0.0, "hits": Self.integer($0.1), "share": share($0.1)] }
                + [sourceTier(reading)],
            "misses": Self.integer(misses), "missShare": share(misses),
            "sourceErrors": reading.samples(named: "webimage_server_source_errors_total").filter { $0.value > 0 }
                .map { ["kind": $0.labels["kind"] ?? "?", "count": Self.integer($0.value)] },
            "slowest": snapshot.slowest.map { entry in
                [
                    "milliseconds": String(format: "%.1f", entry.milliseconds), "status": entry.status, "bytes": entry.bytes,
                    "ago": Self.duration(now - entry.second) + " ago", "path": ProxyPath.redacted(entry.path),
                ] as [String: Any]
            },
        ]
    }

    /// Sources found in the source cache, as a share of the sources the node needed.
    private func sourceTier(_ reading: MetricsReading) -> [String: String] {
        let hits = reading.value("webimage_server_cache_lookups_total", ["tier": "source", "result": "hit"])
        let downloads = reading.value("webimage_downloads_total", ["result": "success"])
        let share = hits + downloads > 0 ? String(format: "%.1f%% of sources", hits / (hits + downloads) * 100) : "–"
        return ["tier": "source", "hits": Self.integer(hits), "share": share]
    }

    /// What the node runs with, without secrets: keys are counted, never shown.
    private static func summary(_ configuration: ImageServerConfiguration) -> [[String: String]] {
        let rows: [(String, String)] = [
            (
                "Signing",
                configuration.signingKeys.isEmpty
                    ? "no key" : "\(configuration.signingKeys.count) key(s), \(configuration.signatureSize)-byte signatures"
            ),
            ("Unsigned URLs", configuration.allowsUnsigned ? "accepted" : "refused"),
            ("Sources", configuration.allowedSources.isEmpty ? "any public address" : configuration.allowedSources.joined(separator: ", ")),
            ("Loopback sources", configuration.allowsLoopbackSources ? "allowed" : "refused"),
            (
                "Automatic formats",
                [configuration.autoWebP ? "WebP" : nil, configuration.autoAVIF ? "AVIF" : nil, configuration.autoJXL ? "JPEG XL" : nil]
                    .compactMap { $0 }.joined(separator: ", ")
                    .ifEmpty("off")
            ),
            ("Jobs at once / waiting", "\(configuration.concurrency) / \(configuration.queueLength)"),
            (
                "Result cache",
                "\(configuration.resultCacheBytes / 1_048_576) MiB on disk, \(configuration.resultMemoryCacheBytes / 1_048_576) MiB in memory"
            ),
            (
                "Source limits",
                "\(configuration.maximumSourceMegapixels) MP, \(configuration.maximumSourceBytes / 1_048_576) MiB, \(configuration.maximumAnimationFrames) frames"
            ),
            (
                "Timeouts",
                "download \(configuration.downloadTimeout), processing \(configuration.processingTimeout), request \(configuration.requestTimeout)"
            ),
            ("Result TTL", "\(configuration.resultTTL) s"),
            ("Presets", configuration.presets.keys.sorted().joined(separator: ", ").ifEmpty("none")),
            (
                "Playground",
                configuration.playground ? (configuration.playgroundToken == nil ? "on, loopback only" : "on, loopback or token") : "off"
            ),
        ]
        return rows.map { ["name": $0.0, "value": $0.1] }
    }

    // MARK: - Helpers

    private func render(_ template: String, _ context: [String: Any]) -> String {
        library.render(context, withTemplate: template) ?? ""
    }

    private func html(_ text: String) -> ProxyResponse {
        ProxyResponse(
            status: 200,
            headers: [
                ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
                // Everything the pages use comes from the node itself.
                (
                    "Content-Security-Policy",
                    "default-src 'self'; img-src 'self' blob: data: http: https:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'"
                ),
            ],
            body: Data(text.utf8))
    }

    private func text(_ status: Int, _ reason: String) -> ProxyResponse {
        ProxyResponse(
            status: status, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")],
            body: Data((reason + "\n").utf8))
    }

    static func queryItem(_ name: String, in query: String?) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.first.map(String.init) == name else { continue }
            let raw = parts.count > 1 ? String(parts[1]) : ""
            return raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? raw
        }
        return nil
    }

    private static func integer(_ value: Double) -> String { String(Int(value)) }

    private static func duration(_ seconds: Int) -> String {
        let (hours, minutes, rest) = (seconds / 3600, seconds % 3600 / 60, seconds % 60)
        return hours > 0 ? "\(hours) h \(minutes) min" : minutes > 0 ? "\(minutes) min \(rest) s" : "\(rest) s"
    }
}

extension String {
    fileprivate func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}
