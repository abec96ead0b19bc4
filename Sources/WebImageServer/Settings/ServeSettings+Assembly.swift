import Foundation
import WebImage
import WebImageGCS
import WebImageS3

/// The values several settings make together, put together once every row is read, and the
/// whole checked as ``ImageServerConfiguration/validate()`` checks it.
extension ServeSettings {
    mutating func assemble() throws(WebImageError) {
        try assembleSigningKeys()
        try assemblePresets()
        configuration.fallbackImage = try Self.image(parts.fallback, flag: "fallback-image").map { source in
            FallbackImage(source: source, status: parts.fallbackStatus ?? 200, ttl: parts.fallbackTTL)
        }
        configuration.watermark = try Self.image(parts.watermark, flag: "watermark").map { source in
            WatermarkImage(source: source, opacity: parts.watermarkOpacity ?? 1)
        }
        let masking = parts.unsharpMasking
        configuration.unsharpMasking = masking == UnsharpMasking(mode: .none) ? nil : masking
        try assembleS3Sources()
        try assembleGCSSources()
        try assembleResultBucket()
        guard !configuration.signingKeys.isEmpty || configuration.allowsUnsigned else {
            throw WebImageError(.invalidArgument, "give a signing key (--key HEX --salt HEX) or --allow-unsigned")
        }
        try configuration.validate()
    }

    /// Keys and salts, given or read from their files, paired in order.
    private mutating func assembleSigningKeys() throws(WebImageError) {
        let keys = try parts.keys.isEmpty ? Self.lines(ofFile: parts.keyFile, "--key-file") ?? [] : parts.keys
        let salts = try parts.salts.isEmpty ? Self.lines(ofFile: parts.saltFile, "--salt-file") ?? [] : parts.salts
        guard keys.count == salts.count else {
            throw WebImageError(.invalidArgument, "give one --salt for each --key (\(keys.count) keys, \(salts.count) salts)")
        }
        configuration.signingKeys = []
        for (key, salt) in zip(keys, salts) {
            guard let pair = SigningKey(hexKey: key, hexSalt: salt) else {
                throw WebImageError(.invalidArgument, "--key and --salt are hex; \"\(key)\" / \"\(salt)\" is not")
            }
            configuration.signingKeys.append(pair)
        }
    }

    /// The presets given, then the file's, read with the arguments separator; each is applied
    /// once when the server is made (OptionsParser.validatePresets), so a typo fails the start
    /// rather than every request.
    private mutating func assemblePresets() throws(WebImageError) {
        var presets = parts.presets
        if let path = parts.presetsPath {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw WebImageError(.invalidArgument, "--presets-path: cannot read \(path)")
            }
            presets += text.split(whereSeparator: \.isNewline).map(String.init)
        }
        do throws(ProxyError) {
            configuration.presets = try OptionsParser.presets(parsing: presets, separator: configuration.argumentsSeparator)
        } catch {
            throw WebImageError(.invalidArgument, "--preset: \(error.reason)")
        }
    }

    /// An image from the first of its base64 data, file (read now) and URL that is given
    /// (imgproxy's order); nil when none is.
    private static func image(_ parts: ImageParts, flag: String) throws(WebImageError) -> ConfiguredImageSource? {
        if let data = parts.data {
            guard let bytes = Data(base64Encoded: data.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw WebImageError(.invalidArgument, "--\(flag)-data is not base64")
            }
            return .data(bytes)
        }
        if let path = parts.path {
            guard let bytes = FileManager.default.contents(atPath: path) else {
                throw WebImageError(.invalidArgument, "--\(flag)-path: cannot read \(path)")
            }
            return .data(bytes)
        }
        if let url = parts.url {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? "") else {
                throw WebImageError(.invalidArgument, "--\(flag)-url is not an http(s) URL")
            }
            return .url(parsed)
        }
        return nil
    }

    /// `s3://` sources, with imgproxy's settings over the AWS SDKs' (credentials always come
    /// from the AWS chain: `AWS_*` variables and the shared files).
    private mutating func assembleS3Sources() throws(WebImageError) {
        guard parts.useS3 else { return }
        configuration.s3Sources = S3Sources(
            client: try s3Client("S3 sources", parts.s3), allowedBuckets: parts.s3.allowedBuckets, deniedBuckets: parts.s3.deniedBuckets)
    }

    /// `gs://` sources (imgproxy's `IMGPROXY_USE_GCS` and its key, endpoint and bucket lists);
    /// without a key, Google's default credentials.
    private mutating func assembleGCSSources() throws(WebImageError) {
        guard parts.useGCS else { return }
        let client: GCSConfiguration
        do {
            client = try GCSConfiguration.fromEnvironment(key: parts.gcsKey, endpoint: parts.gcsEndpoint, environment: environment)
        } catch {
            throw WebImageError(.invalidArgument, "GCS sources: \(error.message ?? error.description)")
        }
        configuration.gcsSources = GCSSources(
            client: client, allowedBuckets: parts.gcsAllowedBuckets, deniedBuckets: parts.gcsDeniedBuckets)
    }

    /// The bucket the fleet's results are shared in: `--result-bucket`, or imgproxy Pro's
    /// `IMGPROXY_CACHE_USE=s3` with `IMGPROXY_CACHE_BUCKET`.
    private mutating func assembleResultBucket() throws(WebImageError) {
        if let use = parts.cacheUse, use.lowercased() != "s3" {
            throw WebImageError(
                .invalidArgument,
                "IMGPROXY_CACHE_USE: only s3 is supported here, not \(use) (the disk result cache is always on, in --result-cache-dir)")
        }
        if parts.cacheUse != nil, parts.resultBucket == nil, parts.cacheBucket == nil {
            throw WebImageError(.invalidArgument, "IMGPROXY_CACHE_USE=s3 needs IMGPROXY_CACHE_BUCKET")
        }
        guard let bucket = parts.resultBucket ?? (parts.cacheUse == nil ? nil : parts.cacheBucket) else { return }
        configuration.resultBucket = ResultBucketSettings(
            client: try s3Client("the result bucket", parts.resultBucketClient), bucket: bucket, keyPrefix: parts.resultBucketPrefix,
            reportsErrors: parts.resultBucketReportsErrors)
    }

    /// An S3 client's settings: the AWS SDKs' with the region, endpoint and addressing given
    /// here over them (imgproxy's default is path style, for any endpoint). `use` names what it
    /// is for in an error.
    private func s3Client(_ use: String, _ parts: BucketParts) throws(WebImageError) -> S3Configuration {
        do throws(WebImageError) {
            var client = try S3Configuration.fromEnvironment(environment)
            if let region = parts.region { client.region = region }
            if let endpoint = parts.endpoint { client.endpoint = try S3Configuration.endpointURL(endpoint) }
            client.usesPathStyle = parts.pathStyle
            return client
        } catch {
            throw WebImageError(.invalidArgument, "\(use): \(error.message ?? error.description)")
        }
    }

    /// The non-empty lines of the file at `path`, trimmed; nil when no path is given.
    private static func lines(ofFile path: String?, _ option: String) throws(WebImageError) -> [String]? {
        guard let path else { return nil }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw WebImageError(.invalidArgument, "\(option): cannot read \(path)")
        }
        return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
