public import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1
public import WebImageCore
import WebImageDownloader

/// A small S3 client on AsyncHTTPClient: the object operations an image service needs, signed
/// with ``SigV4Signer``, against AWS or any S3-compatible server (MinIO, R2, B2, SeaweedFS,
/// Ceph).
///
/// Every operation retries what is transient (5xx, 429, `SlowDown`, a lost connection, a
/// timeout) with jittered back-off up to ``S3Configuration/maximumAttempts``, signs each try
/// anew, and throws a `WebImageError` whose `underlyingError` is the ``S3ServiceError`` S3
/// answered with. The endpoint is the operator's: the client reaches it wherever it is
/// (loopback, a private network), unlike the image downloader's guarded fetches.
///
/// ```swift
/// let client = S3Client(configuration: try .fromEnvironment())
/// let object = try await client.getObject(S3Location(bucket: "photos", key: "2024/cat.jpg"))
/// print(object.data.count, object.info.etag ?? "")
/// try await client.shutdown()
/// ```
public final class S3Client: Sendable {
    /// The configuration it was made with.
    public let configuration: S3Configuration
    private let httpClient: HTTPClient
    private let ownsHTTPClient: Bool
    private let isShutDown = Locked(false)
    private let signer: SigV4Signer?
    /// The downloader's back-off (full jitter, doubling to 20 s) over S3's rule for what is
    /// worth another try: anything transient (5xx, 429, `SlowDown`, a lost connection, a timeout).
    private let retryPolicy: RetryPolicy

    /// Creates a client; with no `httpClient` it makes one of its own, which ``shutdown()`` ends.
    /// Its own client never follows redirects (S3's are errors to report, not to follow: a
    /// wrong region's 301 would need a new signature), gives up on a refused connection at once
    /// (the retries here back off instead), and bounds the wait for each read by
    /// ``S3Configuration/timeout`` as well as the whole answer's head. A client given here keeps
    /// its own settings: only the head's deadline applies.
    public init(configuration: S3Configuration, httpClient: HTTPClient? = nil) {
        self.configuration = configuration
        self.httpClient = httpClient ?? HTTPClient(eventLoopGroupProvider: .singleton, configuration: Self.httpConfiguration(configuration))
        ownsHTTPClient = httpClient == nil
        signer = configuration.credentials.map { SigV4Signer(credentials: $0, region: configuration.region) }
        retryPolicy = RetryPolicy(
            maximumRetries: configuration.maximumAttempts - 1, baseDelay: configuration.retryBaseDelay, maximumDelay: .seconds(20),
            decision: RetryDecision { error, _ in error.isTransient && error.code != .cancelled })
    }

    private static func httpConfiguration(_ configuration: S3Configuration) -> HTTPClient.Configuration {
        var http = HTTPClient.Configuration()
        http.redirectConfiguration = .disallow
        http.timeout.read = TimeAmount(configuration.timeout)
        http.timeout.connect = TimeAmount(min(configuration.timeout, .seconds(10)))
        http.connectionPool.retryConnectionEstablishment = false
        http.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 16
        return http
    }

    /// Ends the HTTP client the client made for itself (not one it was given), waiting for
    /// its connections to close. A client released without it ends its HTTP client anyway, in
    /// the background.
    public func shutdown() async throws {
        let first = isShutDown.withLock { done in
            defer { done = true }
            return !done
        }
        guard ownsHTTPClient, first else { return }
        try await httpClient.shutdown()
    }

    deinit {
        // AsyncHTTPClient stops the process when a client it made is released running; a
        // client held by a loader or a short function must not have to be shut down by hand.
        guard ownsHTTPClient, !isShutDown.withLock({ $0 }) else { return }
        let httpClient = httpClient
        Task { try? await httpClient.shutdown() }
    }

    // MARK: - Objects

    /// GET: the object's bytes (or the range asked for) and headers.
    ///
    /// - Throws: `notModified` when a validator matched; `badStatus(404)` for a missing key or
    ///   bucket; `tooLarge` for an object over ``S3Configuration/maximumObjectSize``.
    public func getObject(_ location: S3Location, options: S3GetOptions = S3GetOptions()) async throws(WebImageError) -> S3Object {
        var headers: [(name: String, value: String)] = []
        if let range = options.range { headers.append(("Range", range)) }
        if let etag = options.ifNoneMatch { headers.append(("If-None-Match", etag)) }
        if let date = options.ifModifiedSince { headers.append(("If-Modified-Since", HTTPDate.format(date))) }
        let response = try await perform(S3Call(method: .GET, location: location, query: versionQuery(location), headers: headers))
        return S3Object(data: response.body, info: Self.info(response.headers), contentRange: response.headers.first(name: "content-range"))
    }

    /// HEAD: the object's headers without its bytes.
    public func headObject(_ location: S3Location) async throws(WebImageError) -> S3ObjectInfo {
        Self.info(try await perform(S3Call(method: .HEAD, location: location, query: versionQuery(location))).headers)
    }

    /// PUT: stores `data` under the location's key, with its content type, cache control and
    /// user metadata (`x-amz-meta-NAME`).
    @discardableResult
    public func putObject(
        _ location: S3Location, data: Data, contentType: String? = nil, cacheControl: String? = nil, metadata: [String: String] = [:]
    ) async throws(WebImageError) -> S3PutResult {
        var headers = Self.objectHeaders(contentType: contentType, cacheControl: cacheControl, metadata: metadata)
        headers.append(("Content-Length", String(data.count)))
        let response = try await perform(S3Call(method: .PUT, location: location, headers: headers, body: data))
        return S3PutResult(etag: response.headers.first(name: "etag"), versionID: response.headers.first(name: "x-amz-version-id"))
    }

    /// DELETE: removes the object (or the version named); a missing key is no error, as in S3.
    public func deleteObject(_ location: S3Location) async throws(WebImageError) {
        _ = try await perform(S3Call(method: .DELETE, location: location, query: versionQuery(location)))
    }

    // MARK: - Multipart uploads

    /// Starts a multipart upload and returns its id. Parts are at least 5 MiB but the last.
    public func createMultipartUpload(
        _ location: S3Location, contentType: String? = nil, cacheControl: String? = nil, metadata: [String: String] = [:]
    ) async throws(WebImageError) -> String {
        let response = try await perform(
            S3Call(
                method: .POST, location: location, query: [("uploads", "")],
                headers: Self.objectHeaders(contentType: contentType, cacheControl: cacheControl, metadata: metadata)))
        guard let id = try S3XMLReader.parse(response.body)["UploadId"], !id.isEmpty else {
            throw WebImageError(.badServerResponse, "\(location): the S3 server started an upload without an UploadId")
        }
        return id
    }

    /// Uploads part `partNumber` (1 to 10000) of an upload.
    public func uploadPart(_ location: S3Location, uploadID: String, partNumber: Int, data: Data) async throws(WebImageError)
        -> S3UploadedPart
    {
        let response = try await perform(
            S3Call(
                method: .PUT, location: location, query: [("partNumber", String(partNumber)), ("uploadId", uploadID)],
                headers: [("Content-Length", String(data.count))], body: data))
        guard let etag = response.headers.first(name: "etag") else {
            throw WebImageError(.badServerResponse, "\(location): the S3 server took part \(partNumber) without an ETag")
        }
        return S3UploadedPart(partNumber: partNumber, etag: etag)
    }

    /// Completes an upload from its parts: the object appears whole under its key, and not before.
    @discardableResult
    public func completeMultipartUpload(_ location: S3Location, uploadID: String, parts: [S3UploadedPart]) async throws(WebImageError)
        -> S3PutResult
    {
        let body = Data(
            ("<CompleteMultipartUpload>"
                + parts.sorted { $0.partNumber < $1.partNumber }.map {
                    "<Part><PartNumber>\($0.partNumber)</PartNumber><ETag>\(Self.xmlEscaped($0.etag))</ETag></Part>"
                }.joined() + "</CompleteMultipartUpload>").utf8)
        let response = try await perform(
            S3Call(
                method: .POST, location: location, query: [("uploadId", uploadID)], headers: [("Content-Type", "application/xml")],
                body: body))
        // S3 may answer 200 and put an error in the body, since it sends the status before it
        // has finished combining the parts.
        let document = try S3XMLReader.parse(response.body)
        if document.name == "Error" {
            let error = S3ServiceError.from(status: 500, body: response.body, requestID: response.headers.first(name: "x-amz-request-id"))
            throw error.webImageError(location.description)
        }
        return S3PutResult(
            etag: document["ETag"] ?? response.headers.first(name: "etag"), versionID: response.headers.first(name: "x-amz-version-id"))
    }

    /// Aborts an upload: its parts are dropped and no object appears.
    public func abortMultipartUpload(_ location: S3Location, uploadID: String) async throws(WebImageError) {
        _ = try await perform(S3Call(method: .DELETE, location: location, query: [("uploadId", uploadID)]))
    }

    /// The multipart uploads started under `prefix` and neither completed nor aborted, every page
    /// of ListMultipartUploads: what a writer that was killed left behind, to abort.
    public func multipartUploads(bucket: String, prefix: String = "") async throws(WebImageError) -> [S3PendingUpload] {
        var uploads: [S3PendingUpload] = []
        var markers: (key: String, upload: String)?
        repeat {
            // Keys come XML-escaped, not URL-encoded: SeaweedFS (4.48) answers `encoding-type=url`
            // with `<EncodingType>url` and keys left as they are, so asking for it would
            // decode a `+` into a space. Keys a writer makes are tame.
            var query: [(name: String, value: String)] = [("uploads", "")]
            if !prefix.isEmpty { query.append(("prefix", prefix)) }
            if let markers { query += [("key-marker", markers.key), ("upload-id-marker", markers.upload)] }
            let response = try await perform(S3Call(method: .GET, location: S3Location(bucket: bucket, key: ""), query: query))
            let page = try Self.uploadsPage(response.body, bucket: bucket)
            uploads += page.uploads
            markers = page.next
        } while markers != nil
        return uploads
    }

    // MARK: - Listing

    /// One page of ListObjectsV2 under `prefix`: up to `maximumKeys` (S3's limit is 1000) after
    /// `continuationToken`. Keys are asked for URL-encoded and decoded here, so that any key
    /// (control characters included) survives the XML.
    public func listObjects(
        bucket: String, prefix: String = "", delimiter: String? = nil, continuationToken: String? = nil, maximumKeys: Int = 1000
    ) async throws(WebImageError) -> S3ListPage {
        var query: [(name: String, value: String)] = [
            ("list-type", "2"), ("encoding-type", "url"), ("max-keys", String(maximumKeys)),
        ]
        if !prefix.isEmpty { query.append(("prefix", prefix)) }
        if let delimiter { query.append(("delimiter", delimiter)) }
        if let continuationToken { query.append(("continuation-token", continuationToken)) }
        let response = try await perform(S3Call(method: .GET, location: S3Location(bucket: bucket, key: ""), query: query))
        return try Self.listPage(response.body, bucket: bucket)
    }

    /// Every object under `prefix`, page after page as iteration goes on; with a `delimiter`,
    /// only those with no delimiter after the prefix (the "folder"'s own level).
    public func objects(bucket: String, prefix: String = "", delimiter: String? = nil) -> AsyncThrowingStream<S3ListedObject, any Error> {
        let (stream, continuation) = AsyncThrowingStream<S3ListedObject, any Error>.makeStream(bufferingPolicy: .bufferingOldest(1000))
        let task = Task {
            var token: String?
            do {
                repeat {
                    let page = try await listObjects(bucket: bucket, prefix: prefix, delimiter: delimiter, continuationToken: token)
                    for object in page.objects { continuation.yield(object) }
                    token = page.nextContinuationToken
                } while token != nil && !Task.isCancelled
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    // MARK: - Presigning

    /// A URL that lets whoever holds it `method` the object until `expires` seconds after
    /// `date` (at most 7 days), with no credentials of their own.
    ///
    /// - Throws: `invalidArgument` when the client has no credentials to sign with.
    public func presignedURL(_ location: S3Location, method: String = "GET", expires: Int = 3600, date: Date = Date()) throws(WebImageError)
        -> URL
    {
        guard let signer else { throw WebImageError(.invalidArgument, "presigning needs credentials") }
        let address = address(location)
        var request = SigV4Request(method: method, host: address.host, path: address.path, query: versionQuery(location))
        signer.presign(&request, expires: expires, date: date)
        return URL(string: "\(address.scheme)://\(address.host)\(request.encodedTarget)")!
    }

    // MARK: - Requests

    /// A request of S3's API that has no method here (a bucket's settings, say), addressed,
    /// signed and retried as the others are; the answer's body.
    package func send(
        _ method: String, _ location: S3Location, query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)] = [],
        body: Data? = nil
    ) async throws(WebImageError) -> Data {
        try await perform(S3Call(method: HTTPMethod(rawValue: method), location: location, query: query, headers: headers, body: body)).body
    }

    private func versionQuery(_ location: S3Location) -> [(name: String, value: String)] {
        location.versionID.map { [("versionId", $0)] } ?? []
    }

    /// Where a location's requests go: scheme, `Host` value and unencoded path.
    func address(_ location: S3Location) -> (scheme: String, host: String, path: String) {
        let endpoint = configuration.endpoint ?? URL(string: "https://s3.\(configuration.region).amazonaws.com")!
        let scheme = endpoint.scheme?.lowercased() ?? "https"
        var host = endpoint.host ?? ""
        if host.contains(":") { host = "[\(host)]" }
        if let port = endpoint.port, port != (scheme == "https" ? 443 : 80) { host += ":\(port)" }
        let key = location.key.isEmpty ? "" : "/" + location.key
        if configuration.usesPathStyle || !Self.isHostCompatible(location.bucket, https: scheme == "https") {
            return (scheme, host, "/" + location.bucket + key)
        }
        return (scheme, location.bucket + "." + host, key.isEmpty ? "/" : key)
    }

    /// Whether a bucket name can lead a host name (lower-case letters, digits, `-`, and dots
    /// only over plain http, where no certificate must match).
    private static func isHostCompatible(_ bucket: String, https: Bool) -> Bool {
        (3...63).contains(bucket.count) && bucket.first != "-" && bucket.last != "-"
            && bucket.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "-" || (!https && $0 == ".") }
    }

    private static func objectHeaders(contentType: String?, cacheControl: String?, metadata: [String: String]) -> [(
        name: String, value: String
    )] {
        var headers: [(name: String, value: String)] = []
        if let contentType { headers.append(("Content-Type", contentType)) }
        if let cacheControl { headers.append(("Cache-Control", cacheControl)) }
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) { headers.append(("x-amz-meta-\(name.lowercased())", value)) }
        return headers
    }

    /// Sends `call`, retrying what is transient; a 2xx answer (206 for a range) is returned,
    /// any other becomes the error S3 sent.
    private func perform(_ call: S3Call) async throws(WebImageError) -> S3Response {
        return try await retryPolicy.retrying { () async throws(WebImageError) -> S3Response in try await performOnce(call) }
    }

    private func performOnce(_ call: S3Call) async throws(WebImageError) -> S3Response {
        let address = address(call.location)
        let payloadHash =
            call.body.map { configuration.signsPayload ? SigV4Signer.payloadHash($0) : SigV4Signer.unsignedPayload }
            ?? SigV4Signer.emptyPayloadHash
        var signing = SigV4Request(
            method: call.method.rawValue, host: address.host, path: address.path, query: call.query,
            headers: call.headers + [("x-amz-content-sha256", payloadHash)])
        signer?.sign(&signing, payloadHash: payloadHash, date: Date())
        let url = "\(address.scheme)://\(address.host)\(signing.encodedTarget)"
        var request = HTTPClientRequest(url: url)
        request.method = call.method
        for (name, value) in signing.headers { request.headers.add(name: name, value: value) }
        if let body = call.body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let description = call.location.key.isEmpty ? "s3://\(call.location.bucket)" : call.location.description
        do {
            let response = try await httpClient.execute(request, timeout: .init(configuration.timeout))
            let status = Int(response.status.code)
            if call.method == .GET, (200..<300).contains(status),
                let length = response.headers.first(name: "content-length").flatMap(Int.init),
                length > configuration.maximumObjectSize
            {
                throw WebImageError(.tooLarge, "\(description) is \(length) bytes, over the limit of \(configuration.maximumObjectSize)")
            }
            guard (200..<300).contains(status) else {
                // An error document is a few hundred bytes: one past the cap is read as the status alone.
                let body = try? await response.body.collect(upTo: S3ServiceError.maximumDocumentBytes)
                throw S3ServiceError.from(
                    status: status, body: body.map { Data(buffer: $0) } ?? Data(),
                    requestID: response.headers.first(name: "x-amz-request-id")
                ).webImageError(description)
            }
            let body = try await response.body.collect(upTo: max(configuration.maximumObjectSize, 1 << 20))
            let data = Data(buffer: body, byteTransferStrategy: .noCopy)
            return S3Response(status: status, headers: response.headers, body: data)
        } catch let error as WebImageError {
            throw error
        } catch is NIOTooManyBytesError {
            throw WebImageError(.tooLarge, "\(description) is over the limit of \(configuration.maximumObjectSize) bytes")
        } catch {
            throw DownloadResponsePolicy.classify(error, url: URL(string: url) ?? call.location.url)
        }
    }

    // MARK: - Reading answers

    private static func info(_ headers: HTTPHeaders) -> S3ObjectInfo {
        var info = S3ObjectInfo(
            etag: headers.first(name: "etag"), lastModified: headers.first(name: "last-modified").flatMap(HTTPDate.parse),
            contentType: headers.first(name: "content-type"), size: headers.first(name: "content-length").flatMap(Int.init),
            cacheControl: headers.first(name: "cache-control"), expires: headers.first(name: "expires"),
            versionID: headers.first(name: "x-amz-version-id"))
        // bytes 0-9/443: the whole size is after the slash.
        if let range = headers.first(name: "content-range"), let total = range.split(separator: "/").last.flatMap({ Int($0) }) {
            info.size = total
        }
        for (name, value) in headers where name.lowercased().hasPrefix("x-amz-meta-") {
            info.metadata[String(name.lowercased().dropFirst("x-amz-meta-".count))] = value
        }
        return info
    }

    static func listPage(_ body: Data, bucket: String) throws(WebImageError) -> S3ListPage {
        let document = try S3XMLReader.parse(body)
        guard document.name == "ListBucketResult" else {
            throw WebImageError(.badServerResponse, "s3://\(bucket): a listing answered with <\(document.name)>")
        }
        let encoded = document["EncodingType"] == "url"
        func decoded(_ text: String) throws(WebImageError) -> String { try listedKey(text, encoded: encoded, bucket: bucket) }
        var objects: [S3ListedObject] = []
        let dates = ISO8601()
        for entry in document.children("Contents") {
            guard let key = entry["Key"], let size = entry["Size"].flatMap(Int.init) else {
                throw WebImageError(.badServerResponse, "s3://\(bucket): a listed object without a key or size")
            }
            objects.append(
                S3ListedObject(
                    key: try decoded(key), size: size, etag: entry["ETag"], lastModified: entry["LastModified"].flatMap(dates.parse)))
        }
        var prefixes: [String] = []
        for prefix in document.children("CommonPrefixes") { if let text = prefix["Prefix"] { prefixes.append(try decoded(text)) } }
        let truncated = document["IsTruncated"] == "true"
        let token = document["NextContinuationToken"]
        if truncated, token == nil {
            throw WebImageError(.badServerResponse, "s3://\(bucket): a truncated listing without a continuation token")
        }
        return S3ListPage(objects: objects, commonPrefixes: prefixes, nextContinuationToken: truncated ? token : nil)
    }

    /// A key of a listing asked for with `encoding-type=url`, decoded when the server encoded it.
    private static func listedKey(_ text: String, encoded: Bool, bucket: String) throws(WebImageError) -> String {
        guard encoded else { return text }
        guard let value = AWSPercentEncoding.decode(text, plusIsSpace: true) else {
            throw WebImageError(.badServerResponse, "s3://\(bucket): a listed key is not URL-encoded: \(text.prefix(64))")
        }
        return value
    }

    static func uploadsPage(_ body: Data, bucket: String) throws(WebImageError) -> (
        uploads: [S3PendingUpload], next: (key: String, upload: String)?
    ) {
        let document = try S3XMLReader.parse(body)
        guard document.name == "ListMultipartUploadsResult" else {
            throw WebImageError(.badServerResponse, "s3://\(bucket): a listing of uploads answered with <\(document.name)>")
        }
        let encoded = document["EncodingType"] == "url"
        func decoded(_ text: String) throws(WebImageError) -> String { try listedKey(text, encoded: encoded, bucket: bucket) }
        var uploads: [S3PendingUpload] = []
        let dates = ISO8601()
        for entry in document.children("Upload") {
            guard let key = entry["Key"], let id = entry["UploadId"], !id.isEmpty else {
                throw WebImageError(.badServerResponse, "s3://\(bucket): a listed upload without a key or id")
            }
            uploads.append(S3PendingUpload(key: try decoded(key), uploadID: id, initiated: entry["Initiated"].flatMap(dates.parse)))
        }
        guard document["IsTruncated"] == "true" else { return (uploads, nil) }
        // The markers are the last upload's when the server leaves them out.
        guard let key = try document["NextKeyMarker"].map(decoded) ?? uploads.last?.key,
            let upload = document["NextUploadIdMarker"] ?? uploads.last?.uploadID
        else {
            throw WebImageError(.badServerResponse, "s3://\(bucket): a truncated listing of uploads without markers")
        }
        return (uploads, (key, upload))
    }

    private static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: ">", with: "&gt;"
        )
        .replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// One request's parts, before addressing and signing.
private struct S3Call: Sendable {
    var method: HTTPMethod
    var location: S3Location
    var query: [(name: String, value: String)] = []
    var headers: [(name: String, value: String)] = []
    var body: Data?
}

private struct S3Response: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: Data
}

/// S3's listing dates: `2009-10-12T17:50:30.000Z`, with or without the fraction. One per page,
/// not two formatters per listed object: a formatter is costly to make.
final class ISO8601 {
    private let plain = ISO8601DateFormatter()
    private let fractional: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()

    func parse(_ text: String) -> Date? {
        plain.date(from: text) ?? fractional.date(from: text)
    }
}
