public import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1
public import WebImageCore
import WebImageDownloader

/// A small Cloud Storage client on AsyncHTTPClient: the JSON API operations an image service
/// needs (read an object, list a prefix, write an object whole or in a resumable upload),
/// authorised by ``GCSCredentials``, against Google or an emulator.
///
/// Every operation retries what is transient (5xx, 429, a lost connection, a timeout) with
/// jittered back-off up to ``GCSConfiguration/maximumAttempts``; an error answer becomes a
/// `WebImageError` with its status and Cloud Storage's message.
///
/// ```swift
/// let client = GCSClient(configuration: try .fromEnvironment())
/// let object = try await client.getObject(GCSLocation(bucket: "photos", object: "2024/cat.jpg"))
/// print(object.data.count, object.info.contentType ?? "")
/// try await client.shutdown()
/// ```
public final class GCSClient: Sendable {
    /// The configuration it was made with.
    public let configuration: GCSConfiguration
    private let httpClient: HTTPClient
    private let tokens: GCSTokenSource
    private let retryPolicy: RetryPolicy
    /// The endpoint's text without a trailing `/`, which every path is put after.
    private let base: String

    /// Creates a client with an HTTP client of its own, which ``shutdown()`` ends. It follows no
    /// redirect and bounds each read by ``GCSConfiguration/timeout``.
    public init(configuration: GCSConfiguration) {
        self.configuration = configuration
        base = String(configuration.endpoint.absoluteString.reversed().drop { $0 == "/" }.reversed())
        var http = HTTPClient.Configuration()
        http.redirectConfiguration = .disallow
        http.timeout.read = TimeAmount(configuration.timeout)
        http.timeout.connect = TimeAmount(min(configuration.timeout, .seconds(10)))
        http.connectionPool.retryConnectionEstablishment = false
        httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
        tokens = GCSTokenSource(credentials: configuration.credentials, httpClient: httpClient, timeout: configuration.timeout)
        retryPolicy = RetryPolicy(
            maximumRetries: configuration.maximumAttempts - 1, baseDelay: configuration.retryBaseDelay, maximumDelay: .seconds(20),
            decision: RetryDecision { error, _ in error.isTransient && error.code != .cancelled })
    }

    /// Ends the HTTP client, waiting for its connections to close.
    public func shutdown() async throws {
        try await httpClient.shutdown()
    }

    /// The object's bytes (`alt=media`), of the location's generation when it names one.
    /// - Throws: `badStatus(404)` for a missing object or bucket, `tooLarge` over
    ///   ``GCSConfiguration/maximumObjectSize``.
    /// With `range`, those bytes only (`Range: bytes=A-B`).
    public func getObject(_ location: GCSLocation, range: ClosedRange<Int>? = nil) async throws(WebImageError) -> GCSObject {
        var query = [("alt", "media")]
        if let generation = location.generation { query.append(("generation", String(generation))) }
        let ranged = range.map { [("Range", "bytes=\($0.lowerBound)-\($0.upperBound)")] } ?? []
        let response = try await perform(
            Call(
                method: .GET, path: "/storage/v1/b/\(Self.escaped(location.bucket))/o/\(location.escapedObject)", query: query,
                headers: ranged),
            describing: location.description)
        let headers = response.headers
        let info = GCSObjectInfo(
            contentType: headers.first(name: "content-type"), cacheControl: headers.first(name: "cache-control"),
            etag: headers.first(name: "etag"), lastModified: headers.first(name: "last-modified"),
            generation: headers.first(name: "x-goog-generation").flatMap { Int64($0) })
        return GCSObject(data: response.body, info: info)
    }

    /// The object's size in bytes, from its metadata.
    public func objectSize(_ location: GCSLocation) async throws(WebImageError) -> Int {
        let response = try await perform(
            Call(method: .GET, path: "/storage/v1/b/\(Self.escaped(location.bucket))/o/\(location.escapedObject)", query: []),
            describing: location.description)
        let fields = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        guard let size = (fields?["size"] as? String).flatMap(Int.init) ?? (fields?["size"] as? NSNumber)?.intValue else {
            throw WebImageError(.badServerResponse, "\(location): metadata without a size")
        }
        return size
    }

    /// Deletes the object.
    public func deleteObject(_ location: GCSLocation) async throws(WebImageError) {
        _ = try await perform(
            Call(method: .DELETE, path: "/storage/v1/b/\(Self.escaped(location.bucket))/o/\(location.escapedObject)", query: []),
            describing: location.description)
    }

    /// One page of the objects whose names start with `prefix`, from `pageToken` on; with a
    /// `delimiter`, the names past it are left out (as folders are).
    public func listObjects(bucket: String, prefix: String = "", delimiter: String? = nil, pageToken: String? = nil)
        async throws(WebImageError) -> GCSListPage
    {
        var query = [("prefix", prefix)]
        if let delimiter { query.append(("delimiter", delimiter)) }
        if let pageToken { query.append(("pageToken", pageToken)) }
        let response = try await perform(
            Call(method: .GET, path: "/storage/v1/b/\(Self.escaped(bucket))/o", query: query), describing: "gs://\(bucket)/\(prefix)")
        guard let fields = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] else {
            throw WebImageError(.badServerResponse, "gs://\(bucket): a listing that is not JSON")
        }
        let objects = (fields["items"] as? [[String: Any]] ?? []).compactMap { item -> GCSListedObject? in
            guard let name = item["name"] as? String else { return nil }
            // The JSON API writes 64-bit numbers as strings.
            let size = (item["size"] as? String).flatMap(Int.init) ?? (item["size"] as? NSNumber)?.intValue ?? 0
            return GCSListedObject(name: name, size: size, generation: (item["generation"] as? String).flatMap { Int64($0) })
        }
        return GCSListPage(objects: objects, nextPageToken: fields["nextPageToken"] as? String)
    }

    /// Writes `data` as the object, whole, in one request (`uploadType=media`).
    public func putObject(_ location: GCSLocation, data: Data, contentType: String = "application/octet-stream")
        async throws(WebImageError)
    {
        _ = try await perform(
            Call(
                method: .POST, path: "/upload/storage/v1/b/\(Self.escaped(location.bucket))/o",
                query: [("uploadType", "media"), ("name", location.object)], headers: [("Content-Type", contentType)], body: data),
            describing: location.description)
    }

    // MARK: - Resumable uploads

    /// Starts a resumable upload of the object and returns its session's URL, which every
    /// chunk is sent to (https://cloud.google.com/storage/docs/performing-resumable-uploads).
    public func startResumableUpload(_ location: GCSLocation, contentType: String = "application/octet-stream")
        async throws(WebImageError) -> URL
    {
        let response = try await perform(
            Call(
                method: .POST, path: "/upload/storage/v1/b/\(Self.escaped(location.bucket))/o",
                query: [("uploadType", "resumable"), ("name", location.object)],
                headers: [("X-Upload-Content-Type", contentType), ("Content-Type", "application/json; charset=UTF-8")],
                body: Data("{}".utf8)),
            describing: location.description)
        guard let session = response.headers.first(name: "location").flatMap(URL.init(string:)) else {
            throw WebImageError(.badServerResponse, "\(location): a resumable upload started without a session URL")
        }
        return session
    }

    /// The size every chunk but the last must be a multiple of: 256 KiB.
    public static let chunkGranularity = 256 * 1024

    /// Sends `data` as the bytes from `offset` on; `total` when it is the last chunk, which ends
    /// the upload. A chunk before the last is a multiple of ``chunkGranularity``.
    /// - Throws: `invalidArgument` for a chunk before the last that is not such a multiple.
    public func uploadChunk(session: URL, data: Data, offset: Int, total: Int?) async throws(WebImageError) {
        guard total != nil || data.count % Self.chunkGranularity == 0 else {
            throw WebImageError(.invalidArgument, "a chunk before the last is a multiple of 256 KiB, not \(data.count) bytes")
        }
        let range =
            data.isEmpty ? "bytes */\(total ?? offset)" : "bytes \(offset)-\(offset + data.count - 1)/\(total.map(String.init) ?? "*")"
        _ = try await perform(
            Call(method: .PUT, url: session, headers: [("Content-Range", range)], body: data, accepts: [308]),
            describing: session.absoluteString)
    }

    // MARK: - Requests

    private struct Call {
        var method: HTTPMethod
        var url: URL?
        var path = ""
        var query: [(String, String)] = []
        var headers: [(String, String)] = []
        var body: Data?
        /// Statuses beside 2xx that are answers, not errors (308: a chunk taken, more to come).
        var accepts: Set<Int> = []

        init(method: HTTPMethod, path: String, query: [(String, String)], headers: [(String, String)] = [], body: Data? = nil) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.body = body
        }

        init(method: HTTPMethod, url: URL, headers: [(String, String)], body: Data?, accepts: Set<Int>) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
            self.accepts = accepts
        }
    }

    private struct Response {
        var headers: HTTPHeaders
        var body: Data
    }

    private func perform(_ call: Call, describing what: String) async throws(WebImageError) -> Response {
        return try await retryPolicy.retrying { () async throws(WebImageError) -> Response in try await performOnce(call, describing: what)
        }
    }

    private func performOnce(_ call: Call, describing what: String) async throws(WebImageError) -> Response {
        let target = call.url?.absoluteString ?? (base + call.path + Self.queryString(call.query))
        var request = HTTPClientRequest(url: target)
        request.method = call.method
        for (name, value) in call.headers { request.headers.add(name: name, value: value) }
        if let authorization = try await tokens.authorization() { request.headers.add(name: "Authorization", value: authorization) }
        if let body = call.body {
            request.headers.add(name: "Content-Length", value: String(body.count))
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        do {
            let response = try await httpClient.execute(request, timeout: .init(configuration.timeout))
            let status = Int(response.status.code)
            guard (200..<300).contains(status) || call.accepts.contains(status) else {
                let body = try? await response.body.collect(upTo: 64 * 1024)
                throw Self.error(status: status, body: body.map { Data(buffer: $0) } ?? Data(), what: what)
            }
            let body = try await response.body.collect(upTo: max(configuration.maximumObjectSize, 1 << 20))
            return Response(headers: response.headers, body: Data(buffer: body, byteTransferStrategy: .noCopy))
        } catch let error as WebImageError {
            throw error
        } catch is NIOTooManyBytesError {
            throw WebImageError(.tooLarge, "\(what) is over the limit of \(configuration.maximumObjectSize) bytes")
        } catch {
            throw DownloadResponsePolicy.classify(error, url: URL(string: target) ?? configuration.endpoint)
        }
    }

    /// An error answer as a `WebImageError`: its status, and the JSON API's message
    /// (`{"error": {"code": 404, "message": "No such object: b/o"}}`) or the body's start.
    static func error(status: Int, body: Data, what: String) -> WebImageError {
        let fields = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        let message = (fields?["error"] as? [String: Any])?["message"] as? String ?? String(decoding: body.prefix(256), as: UTF8.self)
        return WebImageError(.badStatus(status), "\(what): \(status) \(message)")
    }

    private static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: GCSLocation.unreserved) ?? text
    }

    private static func queryString(_ query: [(String, String)]) -> String {
        query.isEmpty ? "" : "?" + query.map { "\(escaped($0.0))=\(escaped($0.1))" }.joined(separator: "&")
    }
}
