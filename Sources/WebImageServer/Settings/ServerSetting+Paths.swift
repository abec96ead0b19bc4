import Foundation
import Logging
import WebImage

/// How a path is read, the pages beside the proxy, and the log.
extension ServerSetting {
    static let paths: [ServerSetting] = [
        ServerSetting(
            "PATH_PREFIX", form: .value("PATH"), imgproxy: .init("PATH_PREFIX", .text), default: "none",
            help: "a prefix every route is under (`/images/health`, `/images/SIG/...`)",
            read: { values, settings in settings.configuration.pathPrefix = values.last ?? "" },
            rule: { configuration in
                let prefix = configuration.pathPrefix
                return prefix.isEmpty || (prefix.hasPrefix("/") && !prefix.hasSuffix("/"))
                    ? nil : "starts with / and does not end with one, as /images"
            }),
        ServerSetting(
            "PRESET", form: .repeatable("NAME=OPTIONS"), imgproxy: .init("PRESETS", .presets), default: "none",
            help: "a named option list for `pr:NAME`, as `thumb=rs:fill:150:150/q:70`"
        ) { values, settings in settings.parts.presets = values },
        ServerSetting(
            "PRESETS_PATH", form: .value("PATH"), imgproxy: .init("PRESETS_PATH", .text), default: "none",
            help: "a file of presets, `NAME=OPTIONS` a line (`#` starts a comment), after the ones given",
            read: reading(\.parts.presetsPath)
        ),
        .flag(
            "ONLY_PRESETS", \.onlyPresets, imgproxy: .init("ONLY_PRESETS", .boolean),
            help: "the options part of a path is one segment of preset names (`thumb:small`)"),
        ServerSetting(
            "ARGUMENTS_SEPARATOR", form: .value("TEXT"), imgproxy: .init("ARGUMENTS_SEPARATOR", .text), default: "`:`",
            help: "what separates an option's name and arguments in paths and presets",
            read: { values, settings in settings.configuration.argumentsSeparator = values.last ?? ":" },
            rule: { $0.argumentsSeparator.isEmpty || $0.argumentsSeparator.contains("/") ? "is not empty and has no /" : nil }),
        .flag(
            "BASE64_URL_INCLUDES_FILENAME", \.base64URLIncludesFilename, imgproxy: .init("BASE64_URL_INCLUDES_FILENAME", .boolean),
            help: "a file name segment after a base64 source is ignored"),
        ServerSetting(
            "ALLOWED_PROCESSING_OPTIONS", form: .value("NAME,..."), imgproxy: .init("ALLOWED_PROCESSING_OPTIONS", .list),
            default: "every option", help: "the only option names a URL may use itself (presets may use any; 404 otherwise)"
        ) { values, settings in settings.configuration.allowedProcessingOptions = Set(SettingText.list(values.last)) },
        .flag(
            "ENABLE_CLIENT_HINTS", \.enableClientHints, imgproxy: .init("ENABLE_CLIENT_HINTS", .boolean),
            help: "`DPR`/`Width` client hints (and `Sec-CH-` forms) as the default `dpr` and width; answers vary by them"),
        .flag(
            "SET_CANONICAL_HEADER", \.setsCanonicalHeader, imgproxy: .init("SET_CANONICAL_HEADER", .boolean),
            help: "answers name their http(s) source in `Link: <URL>; rel=\"canonical\"`"),
        .flag(
            "ENABLE_DEBUG_HEADERS", \.enablesDebugHeaders, imgproxy: .init("ENABLE_DEBUG_HEADERS", .boolean),
            help: "`X-Origin-Width`, `-Height`, `-Content-Length`, `X-Result-Width`, `-Height` on processed results"),
        .text(
            "ALLOW_ORIGIN", \.allowOrigin, "ORIGIN", imgproxy: .init("ALLOW_ORIGIN", .text),
            help: "`Access-Control-Allow-Origin` (with `-Methods: GET, OPTIONS`) on proxy answers; `OPTIONS` answers 200"),
        ServerSetting(
            "HEALTH_CHECK_PATH", form: .value("PATH"), imgproxy: .init("HEALTH_CHECK_PATH", .text), default: "none",
            help: "a second path answering like `/health`",
            read: { values, settings in settings.configuration.healthCheckPath = values.last },
            rule: { $0.healthCheckPath.map { $0.hasPrefix("/") } == false ? "starts with /" : nil }),
    ]

    /// `/playground` and `/status`, and who may see them.
    static let pages: [ServerSetting] = [
        .flag(
            "PLAYGROUND", \.playground,
            help: "serve `/playground`, a page to try options that signs the URLs it makes, to loopback clients"),
        ServerSetting(
            "PLAYGROUND_TOKEN", form: .value("TOKEN"), default: "none",
            help: "also serve the playground to clients presenting the token (`?token=` or `X-Playground-Token`)",
            read: { values, settings in settings.configuration.playgroundToken = values.last },
            rule: { $0.playgroundToken != nil && !$0.playground ? "needs --playground" : nil }),
        .toggle("STATUS_PAGE", \.statusPage, help: "serve `/status`, a page of the node's figures, to loopback clients"),
        .text(
            "STATUS_TOKEN", \.statusToken, "TOKEN",
            help: "also serve `/status` to clients presenting the token (`?token=` or `X-Status-Token`)"),
        ServerSetting(
            "TRUSTED_PROXIES", form: .value("NETWORKS"), default: "none",
            help: "proxies whose `--client-ip-header` names the client for the pages' loopback rule"
        ) { (values, settings) throws(WebImageError) in
            settings.configuration.trustedProxies = []
            for text in SettingText.list(values.last) {
                guard let network = IPNetwork(text.contains("/") ? text : text + (text.contains(":") ? "/128" : "/32")) else {
                    throw WebImageError(.invalidArgument, "\"\(text)\" is not an address or network")
                }
                settings.configuration.trustedProxies.append(network)
            }
        },
        ServerSetting(
            "CLIENT_IP_HEADER", form: .value("HEADER"), default: "x-forwarded-for",
            help:
                "the one header trusted proxies name the client in: `x-forwarded-for`, `x-real-ip` or `forwarded`; its right-most untrusted address is the client"
        ) { (values, settings) throws(WebImageError) in
            guard let header = values.last.flatMap({ ClientIPHeader(rawValue: $0.lowercased()) }) else {
                throw WebImageError(.invalidArgument, "takes x-forwarded-for, x-real-ip or forwarded, not \"\(values.last ?? "")\"")
            }
            settings.configuration.clientIPHeader = header
        },
    ]

    /// The log and traces: the process's, not the configuration's.
    static let logging: [ServerSetting] = [
        ServerSetting(
            "LOG_LEVEL", form: .value("LEVEL"), imgproxy: .init("LOG_LEVEL", .logLevel), default: "info",
            help: "trace, debug, info (one line per request), notice, warning or error"
        ) { (values, settings) throws(WebImageError) in
            guard let level = values.last.flatMap({ Logger.Level(rawValue: $0.lowercased()) }) else {
                throw WebImageError(.invalidArgument, "unknown level \"\(values.last ?? "")\"")
            }
            settings.logLevel = level
        },
        ServerSetting(
            "LOG_FORMAT", form: .value("FORMAT"), imgproxy: .init("LOG_FORMAT", .logFormat), default: "text",
            help:
                "`json`: one JSON object per line on standard error (`time`, `level`, `logger`, `msg`, and each metadata field, the request id as `hb.request.id`), and the standard output's lines as JSON objects too (`{\"msg\":\"listening\",\"address\":\"http://HOST:PORT\",...}`, `operations listening`, `draining`, whatever the log level). Each request's line has `method`, `path` (a proxy path without its signature; a source with a user, a password or a query is shown as `plain/SCHEME://HOST:PORT/PATH?…` without them, base64 sources too; spans' `url.path` likewise), `status`, `bytes`, `ms` (from the moment the request's head was read off the connection, waiting included) and `cache` (`memory`, `disk`, `processed`, `revalidated`, `raw` or `fallback`)"
        ) { (values, settings) throws(WebImageError) in
            switch values.last?.lowercased() {
            case "text": settings.logsJSON = false
            case "json": settings.logsJSON = true
            default: throw WebImageError(.invalidArgument, "is text or json, not \"\(values.last ?? "")\"")
            }
        },
        ServerSetting(
            "TRACING", flag: .some(nil), form: .flag, imgproxy: .init("OPEN_TELEMETRY_ENABLE", .boolean), default: "off",
            help:
                "OpenTelemetry traces over OTLP/HTTP, on whatever the `OTEL_*` variables say (else on when an `OTEL_EXPORTER_OTLP_ENDPOINT`, `_TRACES_ENDPOINT` or `OTEL_TRACES_EXPORTER` is set): a server span per request continuing its `traceparent`, spans for the result cache, fetch, process (decode, transforms, encode) and store, `traceparent` sent to the origin, `trace_id` in the request's log lines (docs/deploy.md, \"Traces\")",
            read: { (values, settings) throws(WebImageError) in settings.tracing = try SettingText.boolean(values.last) }
        ),
    ]
}
