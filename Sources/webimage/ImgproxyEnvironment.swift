import ArgumentParser
import Foundation

/// imgproxy's `IMGPROXY_*` variables, so that an imgproxy deployment's environment file starts
/// `webimage serve`: each variable that has a meaning here is read with imgproxy's parsing (a
/// value of spaces is unset, booleans as Go's `strconv.ParseBool`, durations in whole seconds,
/// keys and salts as comma-separated hex, `IMGPROXY_BIND` as `host:port` or `:port`, presets split
/// by `IMGPROXY_PRESETS_SEPARATOR`) and given to the server as the `WEBIMAGE_*` variable it stands
/// for. A `WEBIMAGE_*` variable or a flag given wins. Every other imgproxy variable is known by
/// name: one that is set is named in one warning at start-up, never silently ignored; a name that
/// is not imgproxy's (a typo) is named too. Read from imgproxy's source (`env/parsers.go`,
/// `server/config.go`, `security/config.go`, `workers/config.go`, `logger/config.go`); the table of
/// every variable is docs/imgproxy-configuration.md.
struct ImgproxyEnvironment {
    /// How one imgproxy variable's value is read (imgproxy's `env` types).
    enum Value: Equatable {
        /// A string, as it is.
        case text
        /// A comma-separated list, trimmed.
        case list
        /// A boolean as Go's `strconv.ParseBool` reads it.
        case boolean
        /// `strconv.Atoi`, durations in whole seconds included.
        case integer
        /// An integer whose 0 means "no limit" in imgproxy: our bound stays, with a warning.
        case limit
        /// An integer whose 0 has no counterpart here: our default stays, with a warning.
        case positive
        /// Comma-separated hex (keys and salts).
        case hexList
        /// `host:port`, or `:port` for every interface.
        case bind
        /// A decimal number (megapixels, an opacity).
        case decimal
        /// debug, info, warn or error.
        case logLevel
        /// pretty or structured (text here), json or gcp (JSON lines here).
        case logFormat
        /// Presets split by `IMGPROXY_PRESETS_SEPARATOR`.
        case presets
    }

    /// How one imgproxy variable is taken.
    enum Support: Equatable {
        /// Read as `Value`, as the `WEBIMAGE_*` variable named here.
        case mapped(String, Value)
        /// Known, not supported here, for the reason given.
        case unsupported(String)
        /// Read as part of the variable named here.
        case readWith(String)
    }

    /// What the environment's imgproxy variables come to.
    struct Translation: Equatable {
        /// `WEBIMAGE_*` variables (full names) with values in this command's own format.
        var variables: [String: String] = [:]
        /// Start-up warnings: set variables that are not supported, names that are not imgproxy's,
        /// values kept from imgproxy's meaning that cannot be honoured.
        var warnings: [String] = []
    }

    let environment: [String: String]

    /// imgproxy's reading of a variable: nil when unset or only spaces.
    private func value(_ name: String) -> String? {
        guard let text = environment[name], !text.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return text
    }

    func translate() throws -> Translation {
        var translation = Translation()
        var unsupported: [String] = []
        var unknown: [String] = []
        for name in environment.keys.sorted() where name.hasPrefix("IMGPROXY_") && value(name) != nil {
            switch Self.variables[name] {
            case .mapped(let target, let kind): try map(name, as: kind, to: target, into: &translation)
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

    private func map(_ name: String, as kind: Value, to target: String, into translation: inout Translation) throws {
        guard let text = value(name) else { return }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let converted: String?
        switch kind {
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
            if number == 0, kind != .integer {
                translation.warnings.append(
                    kind == .limit
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

    private static func failure(_ name: String, _ value: String, _ expected: String) -> ValidationError {
        ValidationError("\(name): \"\(value)\" is not \(expected)")
    }
    /// Every variable imgproxy reads (its source's `env.*` descriptors), and how it is taken here.
    /// Why Azure Blob's and OpenStack Swift's variables are not taken.
    static let otherStores =
        "Azure Blob and OpenStack Swift storage (s3:// and gs:// sources are read; no Azure emulator is reachable here to test against)"

    static let variables: [String: Support] = [
        "IMGPROXY_ABS_ALLOWED_BUCKETS": .unsupported(otherStores),
        "IMGPROXY_ABS_DENIED_BUCKETS": .unsupported(otherStores),
        "IMGPROXY_ABS_ENDPOINT": .unsupported(otherStores),
        "IMGPROXY_ABS_KEY": .unsupported(otherStores),
        "IMGPROXY_ABS_NAME": .unsupported(otherStores),
        "IMGPROXY_AIRBRAKE_ENVIRONMENT": .unsupported("error-reporting services"),
        "IMGPROXY_AIRBRAKE_PROJECT_ID": .unsupported("error-reporting services"),
        "IMGPROXY_AIRBRAKE_PROJECT_KEY": .unsupported("error-reporting services"),
        "IMGPROXY_ALLOWED_PROCESSING_OPTIONS": .mapped("WEBIMAGE_ALLOWED_PROCESSING_OPTIONS", .list),
        "IMGPROXY_ALLOWED_SOURCES": .mapped("WEBIMAGE_ALLOWED_SOURCES", .list),
        "IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES": .unsupported(
            "private and link-local sources are always refused here (imgproxy allows private ones by default); loopback can be allowed"),
        "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": .mapped("WEBIMAGE_ALLOW_LOOPBACK_SOURCES", .boolean),
        "IMGPROXY_ALLOW_ORIGIN": .mapped("WEBIMAGE_ALLOW_ORIGIN", .text),
        "IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES": .unsupported(
            "private and link-local sources are always refused here (imgproxy allows private ones by default); loopback can be allowed"),
        "IMGPROXY_ALLOW_SECURITY_OPTIONS": .mapped("WEBIMAGE_ALLOW_SECURITY_OPTIONS", .boolean),
        "IMGPROXY_ALWAYS_RASTERIZE_SVG": .unsupported(
            "SVG sources are always rasterised here (imgproxy answers them as SVG unless a format is asked for): an SVG answered as it is can carry scripts"
        ),
        "IMGPROXY_ARGUMENTS_SEPARATOR": .mapped("WEBIMAGE_ARGUMENTS_SEPARATOR", .text),
        "IMGPROXY_AUTO_AVIF": .mapped("WEBIMAGE_AUTO_AVIF", .boolean),
        "IMGPROXY_AUTO_JXL": .mapped("WEBIMAGE_AUTO_JXL", .boolean),
        "IMGPROXY_AUTO_ROTATE": .mapped("WEBIMAGE_AUTO_ROTATE", .boolean),
        "IMGPROXY_AUTO_WEBP": .mapped("WEBIMAGE_AUTO_WEBP", .boolean),
        "IMGPROXY_AVIF_SPEED": .mapped("WEBIMAGE_AVIF_SPEED", .integer),
        "IMGPROXY_BASE64_URL_INCLUDES_FILENAME": .mapped("WEBIMAGE_BASE64_URL_INCLUDES_FILENAME", .boolean),
        "IMGPROXY_BASE_URL": .mapped("WEBIMAGE_BASE_URL", .text),
        "IMGPROXY_BIND": .mapped("WEBIMAGE_BIND", .bind),
        "IMGPROXY_BUGSNAG_KEY": .unsupported("error-reporting services"),
        "IMGPROXY_BUGSNAG_STAGE": .unsupported("error-reporting services"),
        "IMGPROXY_CACHE_CONTROL_PASSTHROUGH": .unsupported(
            "results are kept in this server's result cache for the TTL; a source's own Cache-Control and Expires are not carried with them"
        ),
        // imgproxy Pro 4's internal cache: its S3 adapter is the bucket the fleet shares here.
        "IMGPROXY_CACHE_USE": .mapped("WEBIMAGE_CACHE_USE", .text),
        "IMGPROXY_CACHE_BUCKET": .mapped("WEBIMAGE_CACHE_BUCKET", .text),
        "IMGPROXY_CACHE_PATH_PREFIX": .mapped("WEBIMAGE_CACHE_PATH_PREFIX", .text),
        "IMGPROXY_CACHE_S3_REGION": .mapped("WEBIMAGE_CACHE_S3_REGION", .text),
        "IMGPROXY_CACHE_S3_ENDPOINT": .mapped("WEBIMAGE_CACHE_S3_ENDPOINT", .text),
        "IMGPROXY_CACHE_S3_ENDPOINT_USE_PATH_STYLE": .mapped("WEBIMAGE_CACHE_S3_ENDPOINT_USE_PATH_STYLE", .boolean),
        "IMGPROXY_CACHE_REPORT_ERRORS": .mapped("WEBIMAGE_CACHE_REPORT_ERRORS", .boolean),
        "IMGPROXY_CACHE_S3_ASSUME_ROLE_ARN": .unsupported("assuming a role (STS is not called here; give the role's keys)"),
        "IMGPROXY_CACHE_S3_ASSUME_ROLE_EXTERNAL_ID": .unsupported("assuming a role (STS is not called here; give the role's keys)"),
        "IMGPROXY_CACHE_KEY_HEADERS": .unsupported("request headers and cookies in the result's cache key"),
        "IMGPROXY_CACHE_KEY_COOKIES": .unsupported("request headers and cookies in the result's cache key"),
        "IMGPROXY_CACHE_FS_ROOT": .unsupported("the disk result cache is always on, in --result-cache-dir (WEBIMAGE_RESULT_CACHE_DIR)"),
        "IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT": .mapped("WEBIMAGE_SOURCE_KEEP_ALIVE_TIMEOUT", .integer),
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
        "IMGPROXY_DOWNLOAD_TIMEOUT": .mapped("WEBIMAGE_DOWNLOAD_TIMEOUT", .integer),
        "IMGPROXY_ENABLE_CLIENT_HINTS": .mapped("WEBIMAGE_ENABLE_CLIENT_HINTS", .boolean),
        "IMGPROXY_ENABLE_DEBUG_HEADERS": .mapped("WEBIMAGE_ENABLE_DEBUG_HEADERS", .boolean),
        "IMGPROXY_ENFORCE_AVIF": .mapped("WEBIMAGE_ENFORCE_AVIF", .boolean),
        "IMGPROXY_ENFORCE_JXL": .mapped("WEBIMAGE_ENFORCE_JXL", .boolean),
        "IMGPROXY_ENFORCE_THUMBNAIL": .mapped("WEBIMAGE_ENFORCE_THUMBNAIL", .boolean),
        "IMGPROXY_ENFORCE_WEBP": .mapped("WEBIMAGE_ENFORCE_WEBP", .boolean),
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
        "IMGPROXY_ETAG_BUSTER": .mapped("WEBIMAGE_ETAG_BUSTER", .text),
        "IMGPROXY_FAIL_ON_DEPRECATION": .unsupported(
            "a deprecated imgproxy variable is read or named in the start-up warning, never fatal"),
        "IMGPROXY_FALLBACK_IMAGE_DATA": .mapped("WEBIMAGE_FALLBACK_IMAGE_DATA", .text),
        "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": .mapped("WEBIMAGE_FALLBACK_IMAGE_HTTP_CODE", .integer),
        "IMGPROXY_FALLBACK_IMAGE_PATH": .mapped("WEBIMAGE_FALLBACK_IMAGE_PATH", .text),
        "IMGPROXY_FALLBACK_IMAGE_TTL": .mapped("WEBIMAGE_FALLBACK_IMAGE_TTL", .integer),
        "IMGPROXY_FALLBACK_IMAGE_URL": .mapped("WEBIMAGE_FALLBACK_IMAGE_URL", .text),
        "IMGPROXY_FORMAT_QUALITY": .mapped("WEBIMAGE_FORMAT_QUALITY", .list),
        "IMGPROXY_FREE_MEMORY_INTERVAL": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_GCS_ALLOWED_BUCKETS": .mapped("WEBIMAGE_GCS_ALLOWED_BUCKETS", .list),
        "IMGPROXY_GCS_DENIED_BUCKETS": .mapped("WEBIMAGE_GCS_DENIED_BUCKETS", .list),
        "IMGPROXY_GCS_ENDPOINT": .mapped("WEBIMAGE_GCS_ENDPOINT", .text),
        "IMGPROXY_GCS_KEY": .mapped("WEBIMAGE_GCS_KEY", .text),
        "IMGPROXY_GRACEFUL_STOP_TIMEOUT": .mapped("WEBIMAGE_GRACEFUL_STOP_TIMEOUT", .positive),
        "IMGPROXY_HEALTH_CHECK_PATH": .mapped("WEBIMAGE_HEALTH_CHECK_PATH", .text),
        "IMGPROXY_HONEYBADGER_ENV": .unsupported("error-reporting services"),
        "IMGPROXY_HONEYBADGER_KEY": .unsupported("error-reporting services"),
        "IMGPROXY_IGNORE_SSL_VERIFICATION": .mapped("WEBIMAGE_IGNORE_SSL_VERIFICATION", .boolean),
        "IMGPROXY_JPEG_PROGRESSIVE": .mapped("WEBIMAGE_JPEG_PROGRESSIVE", .boolean),
        "IMGPROXY_JXL_EFFORT": .mapped("WEBIMAGE_JXL_EFFORT", .integer),
        "IMGPROXY_KEEP_ALIVE_TIMEOUT": .mapped("WEBIMAGE_IDLE_TIMEOUT", .positive),
        "IMGPROXY_KEEP_COPYRIGHT": .mapped("WEBIMAGE_KEEP_COPYRIGHT", .boolean),
        "IMGPROXY_KEY": .mapped("WEBIMAGE_KEY", .hexList),
        "IMGPROXY_LAST_MODIFIED_BUSTER": .mapped("WEBIMAGE_LAST_MODIFIED_BUSTER", .text),
        "IMGPROXY_LOCAL_FILESYSTEM_ROOT": .mapped("WEBIMAGE_LOCAL_FILESYSTEM_ROOT", .text),
        "IMGPROXY_LOG_FORMAT": .mapped("WEBIMAGE_LOG_FORMAT", .logFormat),
        "IMGPROXY_LOG_LEVEL": .mapped("WEBIMAGE_LOG_LEVEL", .logLevel),
        "IMGPROXY_LOG_MEM_STATS": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_MAX_ANIMATION_FRAMES": .mapped("WEBIMAGE_MAX_ANIMATION_FRAMES", .integer),
        "IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION": .mapped("WEBIMAGE_MAX_ANIMATION_FRAME_RESOLUTION", .decimal),
        "IMGPROXY_MAX_CLIENTS": .mapped("WEBIMAGE_MAX_CLIENTS", .integer),
        "IMGPROXY_MAX_REDIRECTS": .mapped("WEBIMAGE_MAX_REDIRECTS", .integer),
        "IMGPROXY_MAX_RESULT_DIMENSION": .mapped("WEBIMAGE_MAX_RESULT_DIMENSION", .limit),
        "IMGPROXY_MAX_SRC_FILE_SIZE": .mapped("WEBIMAGE_MAX_SRC_BYTES", .limit),
        "IMGPROXY_MAX_SRC_RESOLUTION": .mapped("WEBIMAGE_MAX_SRC_RESOLUTION", .decimal),
        "IMGPROXY_NETWORK": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_NEW_RELIC_APP_NAME": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_NEW_RELIC_KEY": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_NEW_RELIC_LABELS": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_NEW_RELIC_PROPAGATE_EXTERNAL": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_ONLY_PRESETS": .mapped("WEBIMAGE_ONLY_PRESETS", .boolean),
        "IMGPROXY_OPEN_TELEMETRY_CLIENT_CERT": .unsupported(
            "the exporter's TLS files are the standard OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY (paths)"),
        "IMGPROXY_OPEN_TELEMETRY_CLIENT_KEY": .unsupported(
            "the exporter's TLS files are the standard OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY (paths)"),
        "IMGPROXY_OPEN_TELEMETRY_ENABLE": .mapped("WEBIMAGE_TRACING", .boolean),
        "IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS": .unsupported("logs go to standard error (--log-format json for a collector), not over OTLP"),
        "IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS": .unsupported("metrics are Prometheus text on /metrics (--ops-bind), not OTLP"),
        "IMGPROXY_OPEN_TELEMETRY_LOGGER_NAME": .unsupported("logs go to standard error, not over OTLP"),
        "IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL": .unsupported("a traced request always sends traceparent to its origin"),
        "IMGPROXY_OPEN_TELEMETRY_SERVER_CERT": .unsupported(
            "the collector's certificate is the standard OTEL_EXPORTER_OTLP_CERTIFICATE (a path)"),
        "IMGPROXY_OPEN_TELEMETRY_TRACE_ID_GENERATOR": .unsupported("trace ids are W3C random ones; X-Ray ids are not made"),
        "IMGPROXY_PATH_PREFIX": .mapped("WEBIMAGE_PATH_PREFIX", .text),
        "IMGPROXY_PNG_INTERLACED": .mapped("WEBIMAGE_PNG_INTERLACED", .boolean),
        "IMGPROXY_PNG_QUANTIZATION_COLORS": .mapped("WEBIMAGE_PNG_QUANTIZATION_COLORS", .integer),
        "IMGPROXY_PNG_QUANTIZE": .mapped("WEBIMAGE_PNG_QUANTIZE", .boolean),
        "IMGPROXY_PNG_UNLIMITED": .unsupported("libvips' own PNG safety limits; the source limits (resolution, bytes) always hold here"),
        "IMGPROXY_PPROF_BIND": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_PREFERRED_FORMATS": .mapped("WEBIMAGE_PREFERRED_FORMATS", .list),
        "IMGPROXY_PRESERVE_HDR": .unsupported("every result is 8 bits a channel here (a URL's ph:1 is a 400)"),
        "IMGPROXY_PRESETS": .mapped("WEBIMAGE_PRESET", .presets),
        "IMGPROXY_PRESETS_PATH": .mapped("WEBIMAGE_PRESETS_PATH", .text),
        "IMGPROXY_PRESETS_SEPARATOR": .readWith("IMGPROXY_PRESETS"),
        "IMGPROXY_PROMETHEUS_BIND": .mapped("WEBIMAGE_OPS_BIND", .bind),
        "IMGPROXY_PROMETHEUS_NAMESPACE": .unsupported(
            "monitoring integrations: here metrics are Prometheus text on /metrics and traces go over OTLP (OTEL_*)"),
        "IMGPROXY_QUALITY": .mapped("WEBIMAGE_QUALITY", .integer),
        "IMGPROXY_READ_REQUEST_TIMEOUT": .mapped("WEBIMAGE_READ_REQUEST_TIMEOUT", .positive),
        "IMGPROXY_REPORT_DOWNLOADING_ERRORS": .unsupported("error-reporting services"),
        "IMGPROXY_REPORT_IO_ERRORS": .unsupported("error-reporting services"),
        "IMGPROXY_REQUESTS_QUEUE_SIZE": .mapped("WEBIMAGE_QUEUE", .limit),
        "IMGPROXY_S3_ACCESS_POINTS": .unsupported("S3 access points (an ARN in place of a bucket)"),
        "IMGPROXY_S3_ALLOWED_BUCKETS": .mapped("WEBIMAGE_S3_ALLOWED_BUCKETS", .list),
        "IMGPROXY_S3_ASSUME_ROLE_ARN": .unsupported("assuming a role (STS is not called here; give the role's keys)"),
        "IMGPROXY_S3_ASSUME_ROLE_EXTERNAL_ID": .unsupported("assuming a role (STS is not called here; give the role's keys)"),
        "IMGPROXY_S3_DENIED_BUCKETS": .mapped("WEBIMAGE_S3_DENIED_BUCKETS", .list),
        "IMGPROXY_S3_ENDPOINT": .mapped("WEBIMAGE_S3_ENDPOINT", .text),
        "IMGPROXY_S3_ENDPOINT_USE_PATH_STYLE": .mapped("WEBIMAGE_S3_ENDPOINT_USE_PATH_STYLE", .boolean),
        "IMGPROXY_S3_REGION": .mapped("WEBIMAGE_S3_REGION", .text),
        "IMGPROXY_S3_USE_DECRYPTION_CLIENT": .unsupported("S3 client-side encryption"),
        "IMGPROXY_SALT": .mapped("WEBIMAGE_SALT", .hexList),
        "IMGPROXY_SANITIZE_SVG": .unsupported(
            "an SVG answered as SVG (`raw:1`, `skp:svg`, `--skip-processing-formats svg`) is not rewritten; it is always sent as an attachment, and every answer carries imgproxy's `Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox`, so its scripts, event attributes and external references neither run nor load when the URL is opened (as an `<img>` a browser runs none of them anyway)"
        ),
        "IMGPROXY_SECRET": .mapped("WEBIMAGE_SECRET", .text),
        "IMGPROXY_SENTRY_DSN": .unsupported("error-reporting services"),
        "IMGPROXY_SENTRY_ENVIRONMENT": .unsupported("error-reporting services"),
        "IMGPROXY_SENTRY_RELEASE": .unsupported("error-reporting services"),
        "IMGPROXY_SET_CANONICAL_HEADER": .mapped("WEBIMAGE_SET_CANONICAL_HEADER", .boolean),
        "IMGPROXY_SIGNATURE_SIZE": .mapped("WEBIMAGE_SIGNATURE_SIZE", .integer),
        "IMGPROXY_SKIP_PROCESSING_FORMATS": .mapped("WEBIMAGE_SKIP_PROCESSING_FORMATS", .list),
        "IMGPROXY_SOURCE_URL_QUERY_SEPARATOR": .readWith("WEBIMAGE_SOURCE_URL_QUERY_SEPARATOR"),
        "IMGPROXY_SO_REUSEPORT": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_STRIP_COLOR_PROFILE": .mapped("WEBIMAGE_STRIP_COLOR_PROFILE", .boolean),
        "IMGPROXY_STRIP_METADATA": .mapped("WEBIMAGE_STRIP_METADATA", .boolean),
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
        "IMGPROXY_TIMEOUT": .mapped("WEBIMAGE_REQUEST_TIMEOUT", .integer),
        "IMGPROXY_TRUSTED_SIGNATURES": .mapped("WEBIMAGE_TRUSTED_SIGNATURES", .list),
        "IMGPROXY_TTL": .mapped("WEBIMAGE_TTL", .positive),
        "IMGPROXY_URL_REPLACEMENTS": .mapped("WEBIMAGE_URL_REPLACEMENTS", .text),
        "IMGPROXY_USER_AGENT": .mapped("WEBIMAGE_USER_AGENT", .text),
        "IMGPROXY_USE_ABS": .unsupported(otherStores),
        "IMGPROXY_USE_ETAG": .mapped("WEBIMAGE_ETAG", .boolean),
        "IMGPROXY_USE_GCS": .mapped("WEBIMAGE_USE_GCS", .boolean),
        "IMGPROXY_USE_LAST_MODIFIED": .mapped("WEBIMAGE_LAST_MODIFIED", .boolean),
        "IMGPROXY_USE_LINEAR_COLORSPACE": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_USE_S3": .mapped("WEBIMAGE_USE_S3", .boolean),
        "IMGPROXY_USE_SWIFT": .unsupported(otherStores),
        "IMGPROXY_VIPS_CACHE_TRACE": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_VIPS_LEAK_CHECK": .unsupported("libvips, Go runtime and socket internals with no counterpart here"),
        "IMGPROXY_WATERMARK_DATA": .mapped("WEBIMAGE_WATERMARK_DATA", .text),
        "IMGPROXY_WATERMARK_OPACITY": .mapped("WEBIMAGE_WATERMARK_OPACITY", .decimal),
        // imgproxy Pro's, for the paid options this server has.
        "IMGPROXY_UNSHARP_MASKING_MODE": .mapped("WEBIMAGE_UNSHARP_MASKING_MODE", .text),
        "IMGPROXY_UNSHARP_MASKING_WEIGHT": .mapped("WEBIMAGE_UNSHARP_MASKING_WEIGHT", .decimal),
        "IMGPROXY_UNSHARP_MASKING_DIVIDER": .mapped("WEBIMAGE_UNSHARP_MASKING_DIVIDER", .decimal),
        "IMGPROXY_AUTOQUALITY_METHOD": .mapped("WEBIMAGE_AUTOQUALITY_METHOD", .text),
        "IMGPROXY_AUTOQUALITY_TARGET": .mapped("WEBIMAGE_AUTOQUALITY_TARGET", .integer),
        "IMGPROXY_AUTOQUALITY_MIN": .mapped("WEBIMAGE_AUTOQUALITY_MIN", .integer),
        "IMGPROXY_AUTOQUALITY_MAX": .mapped("WEBIMAGE_AUTOQUALITY_MAX", .integer),
        "IMGPROXY_AUTOQUALITY_FORMAT_MIN": .unsupported("per-format autoquality bounds: the URL's or the server's one range applies"),
        "IMGPROXY_AUTOQUALITY_FORMAT_MAX": .unsupported("per-format autoquality bounds: the URL's or the server's one range applies"),
        "IMGPROXY_AUTOQUALITY_ALLOWED_ERROR": .unsupported("the dssim and ml autoquality methods"),
        "IMGPROXY_WATERMARK_PATH": .mapped("WEBIMAGE_WATERMARK_PATH", .text),
        "IMGPROXY_WATERMARK_URL": .mapped("WEBIMAGE_WATERMARK_URL", .text),
        "IMGPROXY_WEBP_EFFORT": .mapped("WEBIMAGE_WEBP_EFFORT", .integer),
        "IMGPROXY_WEBP_PRESET": .mapped("WEBIMAGE_WEBP_PRESET", .text),
        "IMGPROXY_WORKERS": .mapped("WEBIMAGE_CONCURRENCY", .integer),
        "IMGPROXY_WRITE_RESPONSE_TIMEOUT": .mapped("WEBIMAGE_WRITE_RESPONSE_TIMEOUT", .positive),
    ]
}
