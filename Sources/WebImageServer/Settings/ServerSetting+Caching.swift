import Foundation
import WebImage

/// The result cache, the shared result bucket and what clients are told to keep.
extension ServerSetting {
    static let caching: [ServerSetting] =
        [
            ServerSetting(
                "RESULT_CACHE_DIR", form: .value("DIR"), default: "`~/.cache/webimage/serve`",
                help: "`results/` and `sources/`; one per server (a server refuses a directory another process holds)"
            ) { values, settings in settings.configuration.cacheDirectory = values.last.map { URL(fileURLWithPath: $0) } },
            .integer(
                "RESULT_CACHE_SIZE", \.resultCacheBytes, "BYTES", rule: .positive, default: "1 GiB",
                help: "the most bytes the result cache keeps"),
            .integer(
                "RESULT_MEMORY_CACHE_SIZE", \.resultMemoryCacheBytes, "BYTES", rule: .nonNegative, default: "64 MiB",
                help:
                    "recent results also kept in memory (and, in an eighth of it, the paths that led to them, answered again without parsing), 0 for none"
            ),
            .integer(
                "TTL", \.resultTTL, "SECONDS", rule: .positive, imgproxy: .init("TTL", .positive), default: "31536000",
                help: "`Cache-Control` max-age of results"),
            .toggle("ETAG", \.usesETag, imgproxy: .init("USE_ETAG", .boolean), help: "send the source's `ETag` and answer `If-None-Match`"),
            ServerSetting(
                "ETAG_BUSTER", form: .value("TEXT"), imgproxy: .init("ETAG_BUSTER", .text), default: "none",
                help: "changes every ETag (`\"BUSTER/base64url(etag)\"`): clients fetch again"
            ) { values, settings in settings.configuration.etagBuster = values.last ?? "" },
            .toggle(
                "LAST_MODIFIED", \.usesLastModified, imgproxy: .init("USE_LAST_MODIFIED", .boolean),
                help: "send the source's `Last-Modified` and answer `If-Modified-Since`"),
            ServerSetting(
                "LAST_MODIFIED_BUSTER", form: .value("TIME"), imgproxy: .init("LAST_MODIFIED_BUSTER", .text), default: "none",
                help: "a `Last-Modified` older than this RFC 3339 time is sent as it"
            ) { (values, settings) throws(WebImageError) in
                guard let text = values.last, let date = ISO8601DateFormatter().date(from: text) else {
                    throw WebImageError(.invalidArgument, "is an RFC 3339 time such as 2026-01-01T00:00:00Z, not \"\(values.last ?? "")\"")
                }
                settings.configuration.lastModifiedBuster = date
            },
        ] + resultBucket

    /// imgproxy Pro's S3 cache: the bucket a fleet shares its results in.
    static let resultBucket: [ServerSetting] = [
        ServerSetting(
            "RESULT_BUCKET", form: .value("BUCKET"), default: "none",
            help: "processed results shared in this S3 bucket behind the memory and disk tiers",
            read: reading(\.parts.resultBucket)
        ),
        ServerSetting(
            "CACHE_USE", flag: .some(nil), form: .value("s3"), imgproxy: .init("CACHE_USE", .text), default: "none",
            help: "`s3` shares results in `WEBIMAGE_CACHE_BUCKET` (imgproxy Pro's; the disk cache is always on)",
            read: reading(\.parts.cacheUse)
        ),
        ServerSetting(
            "CACHE_BUCKET", flag: .some(nil), form: .value("BUCKET"), imgproxy: .init("CACHE_BUCKET", .text), default: "none",
            help: "the result bucket, with `WEBIMAGE_CACHE_USE=s3`",
            read: reading(\.parts.cacheBucket)
        ),
        ServerSetting(
            "CACHE_PATH_PREFIX", flag: "result-bucket-prefix", form: .value("PREFIX"), imgproxy: .init("CACHE_PATH_PREFIX", .text),
            default: "none", help: "put before every result bucket key, as `results/`"
        ) { values, settings in settings.parts.resultBucketPrefix = values.last ?? "" },
        ServerSetting(
            "CACHE_S3_REGION", flag: "result-bucket-region", form: .value("REGION"), imgproxy: .init("CACHE_S3_REGION", .text),
            default: "the AWS settings'", help: "the result bucket's region",
            read: reading(\.parts.resultBucketClient.region)
        ),
        ServerSetting(
            "CACHE_S3_ENDPOINT", flag: "result-bucket-endpoint", form: .value("URL"), imgproxy: .init("CACHE_S3_ENDPOINT", .text),
            default: "the AWS settings'", help: "the result bucket's endpoint",
            read: reading(\.parts.resultBucketClient.endpoint)
        ),
        ServerSetting(
            "CACHE_S3_ENDPOINT_USE_PATH_STYLE", flag: "result-bucket-path-style", form: .value("BOOL"),
            imgproxy: .init("CACHE_S3_ENDPOINT_USE_PATH_STYLE", .boolean), default: "true",
            help: "path-style addressing for the result bucket"
        ) { (values, settings) throws(WebImageError) in settings.parts.resultBucketClient.pathStyle = try SettingText.boolean(values.last)
        },
        ServerSetting(
            "CACHE_REPORT_ERRORS", flag: "result-bucket-report-errors", form: .flag, imgproxy: .init("CACHE_REPORT_ERRORS", .boolean),
            default: "off", help: "502 when the result bucket cannot be read, rather than processing without it",
            read: reading(\.parts.resultBucketReportsErrors)
        ),
    ]
}
