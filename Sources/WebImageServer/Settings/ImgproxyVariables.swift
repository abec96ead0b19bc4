import Foundation
package import WebImage

/// imgproxy's `IMGPROXY_*` variables, so that an imgproxy deployment's environment file starts
/// `webimage serve`: each variable a ``ServerSetting`` stands for is read with imgproxy's parsing
/// (a value of spaces is unset, booleans as Go's `strconv.ParseBool`, durations in whole seconds,
/// keys and salts as comma-separated hex, `IMGPROXY_BIND` as `host:port` or `:port`, presets
/// split by `IMGPROXY_PRESETS_SEPARATOR`) and given to the settings as the `WEBIMAGE_*` variable
/// it stands for. A `WEBIMAGE_*` variable or a flag given wins. Every other imgproxy variable is
/// known by name: one that is set is named in one warning at start-up, never silently ignored; a
/// name that is not imgproxy's (a typo) is named too. Read from imgproxy's source
/// (`env/parsers.go`, `server/config.go`, `security/config.go`, `workers/config.go`,
/// `logger/config.go`); the table of every variable is docs/imgproxy-configuration.md.
package struct ImgproxyVariables {
    /// How one imgproxy variable is taken.
    package enum Support: Equatable, Sendable {
        /// Read as the `WEBIMAGE_*` variable named here, the way given.
        case mapped(String, ImgproxyVariable.Reading)
        /// Known, not supported here, for the reason given.
        case unsupported(String)
        /// Read as part of the variable named here.
        case readWith(String)
    }

    /// What the environment's imgproxy variables come to.
    package struct Translation: Equatable, Sendable {
        /// `WEBIMAGE_*` variables (full names) with values in this command's own format.
        package var variables: [String: String] = [:]
        /// Start-up warnings: set variables that are not supported, names that are not imgproxy's,
        /// values kept from imgproxy's meaning that cannot be honoured.
        package var warnings: [String] = []
    }

    let environment: [String: String]

    package init(environment: [String: String]) {
        self.environment = environment
    }

    /// imgproxy's reading of a variable: nil when unset or only spaces.
    private func value(_ name: String) -> String? {
        guard let text = environment[name], !text.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return text
    }

    /// The environment's imgproxy variables as `WEBIMAGE_*` ones, and what start-up warns of.
    /// - Throws: `WebImageError.Code.invalidArgument` for a value imgproxy would refuse, naming it.
    package func translate() throws(WebImageError) -> Translation {
        var translation = Translation()
        var unsupported: [String] = []
        var unknown: [String] = []
        for name in environment.keys.sorted() where name.hasPrefix("IMGPROXY_") && value(name) != nil {
            switch Self.support[name] {
            case .mapped(let target, let reading): try map(name, as: reading, to: target, into: &translation)
            case .unsupported: unsupported.append(name)
            case .readWith: break
            case nil: unknown.append(name)
            }
        }
        // Set and empty means something here, as in imgproxy (which looks it up rather than
        // reading it): no separator, the whole rest of an s3:// source is its key.
        if let separator = environment["IMGPROXY_SOURCE_URL_QUERY_SEPARATOR"] {
            translation.variables["WEBIMAGE_SOURCE_URL_QUERY_SEPARATOR"] = separator
        }
        if value("IMGPROXY_BIND") == nil, let port = value("PORT") {
            guard let number = Int(port.trimmingCharacters(in: .whitespaces)) else { throw Self.failure("PORT", port, "an integer") }
            translation.variables["WEBIMAGE_BIND"] = "0.0.0.0:\(number)"
        }
        if !unsupported.isEmpty {
            translation.warnings.append("imgproxy settings not supported here, ignored: \(unsupported.joined(separator: ", "))")
        }
        if !unknown.isEmpty { translation.warnings.append("not imgproxy settings, ignored: \(unknown.joined(separator: ", "))") }
        return translation
    }

    private func map(_ name: String, as reading: ImgproxyVariable.Reading, to target: String, into translation: inout Translation)
        throws(WebImageError)
    {
        guard let text = value(name) else { return }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let converted: String?
        switch reading {
        case .text:
            converted = text
        case .list:
            // Checked as the flag's own value is, by the server's list as it starts: an entry it
            // cannot read stops the start, for an allow-list not honoured whole would allow
            // what it was meant to refuse.
            converted = Self.list(text, separator: ",").joined(separator: ",")
        case .boolean:
            guard let flag = Self.goBool(trimmed) else { throw Self.failure(name, text, "a boolean") }
            converted = flag ? "true" : "false"
        case .integer, .limit, .positive:
            guard let number = Int(trimmed) else { throw Self.failure(name, text, "an integer") }
            if number == 0, reading != .integer {
                translation.warnings.append(
                    reading == .limit
                        ? "\(name)=0 means no limit in imgproxy; the default limit here stays"
                        : "\(name)=0 is not supported here; the default stays")
                converted = nil
            } else {
                converted = "\(number)"
            }
        case .hexList:
            let parts = Self.list(text, separator: ",")
            guard parts.allSatisfy(Self.isHex) else { throw Self.failure(name, text, "comma-separated hex") }
            converted = parts.joined(separator: ",")
        case .bind:
            // imgproxy's `:8080` listens on every interface.
            converted = trimmed.hasPrefix(":") ? "0.0.0.0" + trimmed : trimmed
        case .decimal:
            guard let number = Double(trimmed), number.isFinite else { throw Self.failure(name, text, "a number") }
            converted = "\(number)"
        case .logLevel:
            let levels = ["debug": "debug", "info": "info", "warn": "warning", "error": "error"]
            guard let level = levels[trimmed.lowercased()] else { throw Self.failure(name, text, "debug, info, warn or error") }
            converted = level
        case .logFormat:
            let formats = ["pretty": "text", "structured": "text", "json": "json", "gcp": "json"]
            guard let format = formats[trimmed.lowercased()] else { throw Self.failure(name, text, "pretty, structured, json or gcp") }
            converted = format
        case .presets:
            let presets = Self.list(text, separator: value("IMGPROXY_PRESETS_SEPARATOR") ?? ",")
            guard !presets.contains(where: { $0.contains(",") }) else {
                throw Self.failure(name, text, "presets without commas (a comma separates them here)")
            }
            converted = presets.joined(separator: ",")
        }
        if let converted { translation.variables[target] = converted }
    }

    /// Go's `strconv.ParseBool`.
    static func goBool(_ text: String) -> Bool? {
        switch text {
        case "1", "t", "T", "TRUE", "true", "True": true
        case "0", "f", "F", "FALSE", "false", "False": false
        default: nil
        }
    }

    private static func list(_ text: String, separator: String) -> [String] {
        text.components(separatedBy: separator).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    private static func isHex(_ text: String) -> Bool {
        !text.isEmpty && text.count % 2 == 0 && text.allSatisfy(\.isHexDigit)
    }

    private static func failure(_ name: String, _ value: String, _ expected: String) -> WebImageError {
        WebImageError(.invalidArgument, "\(name): \"\(value)\" is not \(expected)")
    }

    /// Every variable imgproxy reads (its source's `env.*` descriptors) and how it is taken here:
    /// those the settings stand for, and the others.
    package static let support: [String: Support] = {
        var support = others
        for setting in ServerSetting.all {
            if let variable = setting.imgproxy { support[variable.name] = .mapped(setting.variable, variable.reading) }
        }
        return support
    }()

    /// Why Azure Blob's and OpenStack Swift's variables are not taken.
    static let otherStores =
        "Azure Blob and OpenStack Swift storage (s3:// and gs:// sources are read; no Azure emulator is reachable here to test against)"

    /// imgproxy's variables no setting stands for, and why.
    private static let others: [String: Support] = [
        "IMGPROXY_ABS_ALLOWED_BUCKETS": .unsupported(otherStores),
        "IMGPROXY_ABS_DENIED_BUCKETS": .unsupported(otherStores),
        "IMGPROXY_ABS_ENDPOINT": .unsupported(otherStores),
        "IMGPROXY_ABS_KEY": .unsupported(otherStores),
        "IMGPROXY_ABS_NAME": .unsupported(otherStores),
        "IMGPROXY_AIRBRAKE_ENVIRONMENT": .unsupported("error-reporting services"),
        "IMGPROXY_AIRBRAKE_PROJECT_ID": .unsupported("error-reporting services"),
        "IMGPROXY_AIRBRAKE_PROJECT_KEY": .unsupported("error-reporting services"),
        "IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES": .unsupported(
            "private and link-local sources are always refused here (imgproxy allows private ones by default); loopback can be allowed"),
        "IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES": .unsupported(
            "private and link-local sources are always refused here (imgproxy allows private ones by default); loopback can be allowed"),
        "IMGPROXY_ALWAYS_RASTERIZE_SVG": .unsupported(
            "SVG sources are always rasterised here (imgproxy answers them as SVG unless a format is asked for): an SVG answered as it is can carry scripts"
        ),
        "IMGPROXY_BUGSNAG_KEY": .unsupported("error-reporting services"),
        "IMGPROXY_BUGSNAG_STAGE": .unsupported("error-reporting services"),
        "IMGPROXY_CACHE_CONTROL_PASSTHROUGH": .unsupported(
            "results are kept in this server's result cache for the TTL; a source's own Cache-Control and Expires are not carried with them"
        ),
        "IMGPROXY_CACHE_S3_ASSUME_ROLE_ARN": .unsupported("assuming a role (STS is not called here; give the role's keys)"),
        "IMGPROXY_CACHE_S3_ASSUME_ROLE_EXTERNAL_ID": .unsupported("assuming a role (STS is not called here; give the role's keys)"),
        "IMGPROXY_CACHE_KEY_HEADERS": .unsupported("request headers and cookies in the result's cache key"),
        "IMGPROXY_CACHE_KEY_COOKIES": .unsupported("request headers and cookies in the result's cache key"),
        "IMGPROXY_CACHE_FS_ROOT": .unsupported("the disk result cache is always on, in --result-cache-dir (WEBIMAGE_RESULT_CACHE_DIR)"),
        "IMGPROXY_CLOUD_WATCH_NAMESPACE": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_CLOUD_WATCH_REGION": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_CLOUD_WATCH_SERVICE_NAME": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_COOKIE_BASE_URL": .unsupported(
            "a source is fetched once for every client (coalesced and cached), so no client's cookies are sent with it"),
        "IMGPROXY_COOKIE_PASSTHROUGH": .unsupported(
            "a source is fetched once for every client (coalesced and cached), so no client's cookies are sent with it"),
        "IMGPROXY_COOKIE_PASSTHROUGH_ALL": .unsupported(
            "a source is fetched once for every client (coalesced and cached), so no client's cookies are sent with it"),
        "IMGPROXY_DATADOG_ENABLE": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_DATADOG_PROPAGATE_EXTERNAL": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_DEVELOPMENT_ERRORS_MODE": .unsupported("an error's reason is always in the answer here, one line, never a stack trace"),
        "IMGPROXY_DISABLE_SHRINK_ON_LOAD": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_ENV_AWS_SECRET_ID": .unsupported("settings from secret stores and files"),
        "IMGPROXY_ENV_AWS_SECRET_REGION": .unsupported("settings from secret stores and files"),
        "IMGPROXY_ENV_AWS_SECRET_VERSION_ID": .unsupported("settings from secret stores and files"),
        "IMGPROXY_ENV_AWS_SECRET_VERSION_STAGE": .unsupported("settings from secret stores and files"),
        "IMGPROXY_ENV_AWS_SSM_PARAMETERS_PATH": .unsupported("settings from secret stores and files"),
        "IMGPROXY_ENV_AWS_SSM_PARAMETERS_REGION": .unsupported("settings from secret stores and files"),
        "IMGPROXY_ENV_GCP_KEY": .unsupported("settings from secret stores and files"),
        "IMGPROXY_ENV_GCP_SECRET_ID": .unsupported("settings from secret stores and files"),
        "IMGPROXY_ENV_GCP_SECRET_PROJECT_ID": .unsupported("settings from secret stores and files"),
        "IMGPROXY_ENV_GCP_SECRET_VERSION_ID": .unsupported("settings from secret stores and files"),
        "IMGPROXY_ENV_LOCAL_FILE_PATH": .unsupported("settings from secret stores and files"),
        "IMGPROXY_FAIL_ON_DEPRECATION": .unsupported(
            "a deprecated imgproxy variable is read or named in the start-up warning, never fatal"),
        "IMGPROXY_FREE_MEMORY_INTERVAL": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_HONEYBADGER_ENV": .unsupported("error-reporting services"),
        "IMGPROXY_HONEYBADGER_KEY": .unsupported("error-reporting services"),
        "IMGPROXY_LOG_MEM_STATS": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_NETWORK": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_NEW_RELIC_APP_NAME": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_NEW_RELIC_KEY": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_NEW_RELIC_LABELS": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_NEW_RELIC_PROPAGATE_EXTERNAL": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_OPEN_TELEMETRY_CLIENT_CERT": .unsupported(
            "the exporter's TLS files are the standard OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY (paths)"),
        "IMGPROXY_OPEN_TELEMETRY_CLIENT_KEY": .unsupported(
            "the exporter's TLS files are the standard OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY (paths)"),
        "IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS": .unsupported("logs go to standard error (--log-format json for a collector), not over OTLP"),
        "IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS": .unsupported("metrics are Prometheus text on /metrics (--ops-bind), not OTLP"),
        "IMGPROXY_OPEN_TELEMETRY_LOGGER_NAME": .unsupported("logs go to standard error, not over OTLP"),
        "IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL": .unsupported("a traced request always sends traceparent to its origin"),
        "IMGPROXY_OPEN_TELEMETRY_SERVER_CERT": .unsupported(
            "the collector's certificate is the standard OTEL_EXPORTER_OTLP_CERTIFICATE (a path)"),
        "IMGPROXY_OPEN_TELEMETRY_TRACE_ID_GENERATOR": .unsupported("trace ids are W3C random ones; X-Ray ids are not made"),
        "IMGPROXY_PNG_UNLIMITED": .unsupported("libvips' own PNG safety limits; the source limits (resolution, bytes) always hold here"),
        "IMGPROXY_PPROF_BIND": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_PRESETS_SEPARATOR": .readWith("IMGPROXY_PRESETS"),
        "IMGPROXY_PROMETHEUS_NAMESPACE": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_REPORT_DOWNLOADING_ERRORS": .unsupported("error-reporting services"),
        "IMGPROXY_REPORT_IO_ERRORS": .unsupported("error-reporting services"),
        "IMGPROXY_S3_ACCESS_POINTS": .unsupported("S3 access points (an ARN in place of a bucket)"),
        "IMGPROXY_S3_ASSUME_ROLE_ARN": .unsupported("assuming a role (STS is not called here; give the role's keys)"),
        "IMGPROXY_S3_ASSUME_ROLE_EXTERNAL_ID": .unsupported("assuming a role (STS is not called here; give the role's keys)"),
        "IMGPROXY_S3_USE_DECRYPTION_CLIENT": .unsupported("S3 client-side encryption"),
        "IMGPROXY_SANITIZE_SVG": .unsupported(
            "an SVG answered as SVG (`raw:1`, `skp:svg`, `--skip-processing-formats svg`) is not rewritten; it is always sent as an attachment, and every answer carries imgproxy's `Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox`, so its scripts, event attributes and external references neither run nor load when the URL is opened (as an `<img>` a browser runs none of them anyway)"
        ),
        "IMGPROXY_SENTRY_DSN": .unsupported("error-reporting services"),
        "IMGPROXY_SENTRY_ENVIRONMENT": .unsupported("error-reporting services"),
        "IMGPROXY_SENTRY_RELEASE": .unsupported("error-reporting services"),
        "IMGPROXY_SOURCE_URL_QUERY_SEPARATOR": .readWith("WEBIMAGE_SOURCE_URL_QUERY_SEPARATOR"),
        "IMGPROXY_SO_REUSEPORT": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_SVG_UNLIMITED": .unsupported("libvips' own SVG safety limits; the source limits always hold here"),
        "IMGPROXY_SWIFT_ALLOWED_BUCKETS": .unsupported(otherStores),
        "IMGPROXY_SWIFT_API_KEY": .unsupported(otherStores),
        "IMGPROXY_SWIFT_AUTH_URL": .unsupported(otherStores),
        "IMGPROXY_SWIFT_AUTH_VERSION": .unsupported(otherStores),
        "IMGPROXY_SWIFT_CONNECT_TIMEOUT_SECONDS": .unsupported(otherStores),
        "IMGPROXY_SWIFT_DENIED_BUCKETS": .unsupported(otherStores),
        "IMGPROXY_SWIFT_DOMAIN": .unsupported(otherStores),
        "IMGPROXY_SWIFT_TENANT": .unsupported(otherStores),
        "IMGPROXY_SWIFT_TIMEOUT_SECONDS": .unsupported(otherStores),
        "IMGPROXY_SWIFT_USERNAME": .unsupported(otherStores),
        "IMGPROXY_SYSLOG_ADDRESS": .unsupported("logging to syslog"),
        "IMGPROXY_SYSLOG_ENABLE": .unsupported("logging to syslog"),
        "IMGPROXY_SYSLOG_LEVEL": .unsupported("logging to syslog"),
        "IMGPROXY_SYSLOG_NETWORK": .unsupported("logging to syslog"),
        "IMGPROXY_SYSLOG_TAG": .unsupported("logging to syslog"),
        "IMGPROXY_TIFF_UNLIMITED": .unsupported("libvips' own TIFF safety limits; the source limits always hold here"),
        "IMGPROXY_USE_ABS": .unsupported(otherStores),
        "IMGPROXY_USE_LINEAR_COLORSPACE": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_USE_SWIFT": .unsupported(otherStores),
        "IMGPROXY_VIPS_CACHE_TRACE": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_VIPS_LEAK_CHECK": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_AUTOQUALITY_FORMAT_MIN": .unsupported("per-format autoquality bounds: the URL's or the server's one range applies"),
        "IMGPROXY_AUTOQUALITY_FORMAT_MAX": .unsupported("per-format autoquality bounds: the URL's or the server's one range applies"),
        "IMGPROXY_AUTOQUALITY_ALLOWED_ERROR": .unsupported("the dssim and ml autoquality methods"),
    ]
}
