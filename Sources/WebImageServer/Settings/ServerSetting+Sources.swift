import Foundation
import WebImage

/// Where sources come from and how they are fetched.
extension ServerSetting {
    static let sources: [ServerSetting] =
        [
            .flag(
                "ALLOW_LOOPBACK_SOURCES", \.allowsLoopbackSources, imgproxy: .init("ALLOW_LOOPBACK_SOURCE_ADDRESSES", .boolean),
                help: "fetch from 127.0.0.0/8 and ::1 (tests and demos); every other non-public address stays refused"),
            // Checked by the server's own list (http(s), s3:// and local:/// entries, imgproxy's `*`)
            // in ImageServerConfiguration.validate(), so an application configuring the library is checked alike.
            .list(
                "ALLOWED_SOURCES", \.allowedSources, "PREFIX,...", imgproxy: .init("ALLOWED_SOURCES", .list), default: "any public source",
                help: "source URL prefixes; `*` in the host or path matches any characters but `/`, as imgproxy's"),
            .text(
                "LOCAL_FILESYSTEM_ROOT", \.localFilesystemRoot, "DIR", imgproxy: .init("LOCAL_FILESYSTEM_ROOT", .text),
                help:
                    "`local:///PATH` sources read from `DIR`: `..` stops at the root, a symbolic link leading outside it is refused (404), the byte cap holds; a file is opened without blocking and refused unless it is a regular file (a FIFO, a device, a socket: 404), and read in a pool of eight threads of its own under the request's deadline, so a hung mount holds those threads, never the server"
            ),
            .duration(
                "DOWNLOAD_TIMEOUT", \.downloadTimeout, imgproxy: .init("DOWNLOAD_TIMEOUT", .integer), default: "10",
                help: "the most seconds one source download may take"),
            .integer(
                "MAX_DOWNLOADS_PER_HOST", \.maximumDownloadsPerHost, "N", rule: .positive, default: "8",
                help: "source downloads at once from one host (a source's 429 or 503 is answered 502 at once, without holding its host)"),
            .optionalDuration(
                "SOURCE_KEEP_ALIVE_TIMEOUT", \.sourceKeepAliveTimeout, allowsZero: true,
                imgproxy: .init("CLIENT_KEEP_ALIVE_TIMEOUT", .integer),
                default: "60", help: "seconds an idle connection to a source's host is kept for the next fetch; 0 reuses none"),
            .integer(
                "MAX_REDIRECTS", \.maximumRedirects, "N", rule: .nonNegative, imgproxy: .init("MAX_REDIRECTS", .integer), default: "10",
                help: "redirects followed per source, each hop checked"),
            ServerSetting(
                "USER_AGENT", form: .value("TEXT"), imgproxy: .init("USER_AGENT", .text), default: "the downloader's",
                help: "the `User-Agent` of source requests"
            ) { values, settings in settings.configuration.userAgent = values.last ?? settings.configuration.userAgent },
            .flag(
                "IGNORE_SSL_VERIFICATION", \.ignoresSSLVerification, imgproxy: .init("IGNORE_SSL_VERIFICATION", .boolean),
                help: "fetch sources whose TLS certificate does not verify"),
            ServerSetting(
                "BASE_URL", form: .value("URL"), imgproxy: .init("BASE_URL", .text), default: "none",
                help: "put in front of each source URL that does not start with it"
            ) { values, settings in settings.configuration.sourceRewriting.baseURL = values.last ?? "" },
            ServerSetting(
                "URL_REPLACEMENTS", form: .value("RULES"), imgproxy: .init("URL_REPLACEMENTS", .text), default: "none",
                help: "`PATTERN=REPLACEMENT;...` applied to source URLs first (`*` any characters but `/`, `$1` in the replacement)"
            ) { (values, settings) throws(WebImageError) in
                do throws(ProxyError) {
                    settings.configuration.sourceRewriting.replacements = try SourceRewriting.replacements(parsing: values.last ?? "")
                } catch {
                    throw WebImageError(.invalidArgument, error.reason)
                }
            },
        ] + fallbackImage

    /// The image answered when a source cannot be fetched.
    static let fallbackImage: [ServerSetting] = [
        ServerSetting(
            "FALLBACK_IMAGE_PATH", form: .value("PATH"), imgproxy: .init("FALLBACK_IMAGE_PATH", .text), default: "none",
            help:
                "an image answered (with the request's options, its own status and max-age, never cached as the result) when a source cannot be fetched",
            read: reading(\.parts.fallback.path)
        ),
        ServerSetting(
            "FALLBACK_IMAGE_URL", form: .value("URL"), imgproxy: .init("FALLBACK_IMAGE_URL", .text), default: "none",
            help: "the fallback image's URL, fetched like a source",
            read: reading(\.parts.fallback.url)
        ),
        ServerSetting(
            "FALLBACK_IMAGE_DATA", form: .value("BASE64"), imgproxy: .init("FALLBACK_IMAGE_DATA", .text), default: "none",
            help: "the fallback image in base64 (before the path and the URL, imgproxy's order)",
            read: reading(\.parts.fallback.data)
        ),
        ServerSetting(
            "FALLBACK_IMAGE_HTTP_CODE", form: .value("CODE"), imgproxy: .init("FALLBACK_IMAGE_HTTP_CODE", .integer), default: "200",
            help: "the status of a fallback answer, 0 for the source's error status",
            read: { (values, settings) throws(WebImageError) in settings.parts.fallbackStatus = try SettingText.integer(values.last) },
            rule: { configuration in
                configuration.fallbackImage.map { $0.status == 0 || (100...599).contains($0.status) } == false ? "is 0 or 100-599" : nil
            }),
        ServerSetting(
            "FALLBACK_IMAGE_TTL", form: .value("SECONDS"), imgproxy: .init("FALLBACK_IMAGE_TTL", .integer), default: "`--ttl`",
            help: "the max-age of a fallback answer",
            read: { (values, settings) throws(WebImageError) in settings.parts.fallbackTTL = try SettingText.integer(values.last) },
            rule: { ($0.fallbackImage?.ttl ?? 0) < 0 ? "is 0 or more" : nil }),
    ]

    /// `s3://` and `gs://` sources.
    static let s3Sources: [ServerSetting] = [
        ServerSetting(
            "USE_S3", form: .flag, imgproxy: .init("USE_S3", .boolean), default: "off",
            help:
                "`s3://BUCKET/KEY[?VERSION]` sources, with the AWS SDKs' credentials (`AWS_*`, `~/.aws`); `s3://` prefixes in the allowed sources judge keys",
            read: reading(\.parts.useS3)
        ),
        ServerSetting(
            "S3_REGION", form: .value("REGION"), imgproxy: .init("S3_REGION", .text), default: "the AWS settings', else `us-east-1`",
            help: "the sources' region",
            read: reading(\.parts.s3.region)
        ),
        ServerSetting(
            "S3_ENDPOINT", form: .value("URL"), imgproxy: .init("S3_ENDPOINT", .text), default: "the AWS settings', else AWS",
            help: "an S3-compatible store's endpoint, reached even on loopback",
            read: reading(\.parts.s3.endpoint)
        ),
        ServerSetting(
            "S3_ENDPOINT_USE_PATH_STYLE", form: .value("BOOL"), imgproxy: .init("S3_ENDPOINT_USE_PATH_STYLE", .boolean), default: "true",
            help: "`ENDPOINT/BUCKET/KEY` rather than `BUCKET.ENDPOINT/KEY` (imgproxy's default, for any endpoint)",
            read: reading(\.parts.s3.pathStyle)
        ),
        ServerSetting(
            "S3_ALLOWED_BUCKETS", form: .value("B,..."), imgproxy: .init("S3_ALLOWED_BUCKETS", .list), default: "any",
            help: "the only buckets sources may name (403 otherwise)",
            read: reading(\.parts.s3.allowedBuckets)
        ),
        ServerSetting(
            "S3_DENIED_BUCKETS", form: .value("B,..."), imgproxy: .init("S3_DENIED_BUCKETS", .list), default: "none",
            help: "buckets sources may never name",
            read: reading(\.parts.s3.deniedBuckets)
        ),
        ServerSetting(
            "SOURCE_URL_QUERY_SEPARATOR", form: .value("TEXT"), default: "`?`",
            help: "what ends an `s3://` key and starts its version; empty for none (imgproxy's `IMGPROXY_SOURCE_URL_QUERY_SEPARATOR`)",
            keepsEmpty: true
        ) { values, settings in settings.configuration.sourceURLQuerySeparator = values.last ?? "?" },
        ServerSetting(
            "USE_GCS", flag: .some(nil), form: .flag, imgproxy: .init("USE_GCS", .boolean), default: "off",
            help:
                "`gs://BUCKET/OBJECT[?GENERATION]` sources over the JSON API: a service account's key, else Google's default credentials; `gs://` prefixes in the allowed sources judge objects",
            read: reading(\.parts.useGCS)
        ),
        ServerSetting(
            "GCS_KEY", flag: .some(nil), form: .value("JSON"), imgproxy: .init("GCS_KEY", .text), default: "Google's default credentials",
            help: "a service account's key, its JSON",
            read: reading(\.parts.gcsKey)
        ),
        ServerSetting(
            "GCS_ENDPOINT", flag: .some(nil), form: .value("URL"), imgproxy: .init("GCS_ENDPOINT", .text), default: "Google's",
            help: "the JSON API's endpoint (an emulator's)",
            read: reading(\.parts.gcsEndpoint)
        ),
        ServerSetting(
            "GCS_ALLOWED_BUCKETS", flag: .some(nil), form: .value("B,..."), imgproxy: .init("GCS_ALLOWED_BUCKETS", .list), default: "any",
            help: "the only buckets `gs://` sources may name",
            read: reading(\.parts.gcsAllowedBuckets)
        ),
        ServerSetting(
            "GCS_DENIED_BUCKETS", flag: .some(nil), form: .value("B,..."), imgproxy: .init("GCS_DENIED_BUCKETS", .list), default: "none",
            help: "buckets `gs://` sources may never name",
            read: reading(\.parts.gcsDeniedBuckets)
        ),
    ]
}
