public import Foundation
internal import Crypto
internal import WebImageCore

/// AWS Signature Version 4, as S3 takes it: the `Authorization` header of a request, or the
/// query of a presigned URL.
///
/// The signer works on a request's parts before they become a URL: the path and the query's
/// names and values unencoded, so that the canonical request and the URL sent use the one
/// encoding made here (``AWSPercentEncoding``). S3's rules apply: the path is encoded once and
/// never normalised (a key may hold `//` or `..`), and a session token is signed with the rest.
///
/// ```swift
/// let signer = SigV4Signer(credentials: credentials, region: "eu-west-1")
/// var request = SigV4Request(method: "GET", host: "bucket.s3.eu-west-1.amazonaws.com", path: "/photo.jpg")
/// let signature = signer.sign(&request, payloadHash: SigV4Signer.emptyPayloadHash, date: Date())
/// // request.headers now carries Authorization, X-Amz-Date (and X-Amz-Security-Token).
/// ```
public struct SigV4Signer: Sendable {
    /// Who signs.
    public var credentials: S3Credentials
    /// The region the request goes to (`us-east-1`).
    public var region: String
    /// The service's signing name: `s3`.
    public var service: String

    /// Creates a signer.
    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The payload hash of an empty body: SHA-256 of nothing, in hex.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    /// The payload hash that signs no body (S3 checks the body against nothing).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// The SHA-256 of `payload` in lowercase hex: a signed payload's hash.
    public static func payloadHash(_ payload: Data) -> String {
        SHA256.hash(data: payload).lowercaseHex
    }

    /// Headers never signed, as the AWS SDKs leave them out: a proxy or the HTTP client may
    /// change them on the way.
    static let unsignedHeaders: Set<String> = ["authorization", "expect", "transfer-encoding", "user-agent", "x-amzn-trace-id"]

    /// Signs `request` in its headers: sets `X-Amz-Date` (and `X-Amz-Security-Token` with a
    /// session token), then `Authorization` over every header but `authorization`, `expect`,
    /// `transfer-encoding`, `user-agent` and `x-amzn-trace-id`, as the AWS SDKs leave those out.
    /// `payloadHash` is ``payloadHash(_:)`` of the body, ``emptyPayloadHash`` or
    /// ``unsignedPayload``; S3 also wants it as `x-amz-content-sha256`, which the caller sets.
    @discardableResult
    public func sign(_ request: inout SigV4Request, payloadHash: String, date: Date) -> SigV4Signature {
        let stamp = AmzDate(date)
        request.setHeader("X-Amz-Date", stamp.dateTime)
        if let token = credentials.sessionToken { request.setHeader("X-Amz-Security-Token", token) }
        let signed = signedHeaderNames(request.headers)
        let canonical = canonicalRequest(request, signedHeaders: signed, payloadHash: payloadHash)
        var signature = finish(canonical, stamp: stamp)
        signature.signedHeaders = signed.joined(separator: ";")
        signature.authorization =
            "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope(stamp)), SignedHeaders=\(signature.signedHeaders), Signature=\(signature.signature)"
        request.setHeader("Authorization", signature.authorization)
        return signature
    }

    /// Presigns `request` in its query (a URL anyone holding it may use until it expires):
    /// adds the `X-Amz-*` parameters and the signature. Only `host` is signed and the payload
    /// is unsigned, as S3 presigned URLs are; `expires` is in seconds, 1 to 604800 (7 days).
    @discardableResult
    public func presign(_ request: inout SigV4Request, expires: Int, date: Date) -> SigV4Signature {
        let stamp = AmzDate(date)
        request.query += [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            ("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope(stamp))"),
            ("X-Amz-Date", stamp.dateTime),
            ("X-Amz-Expires", String(min(max(expires, 1), 604_800))),
            ("X-Amz-SignedHeaders", "host"),
        ]
        if let token = credentials.sessionToken { request.query.append(("X-Amz-Security-Token", token)) }
        let hostOnly = SigV4Request(method: request.method, host: request.host, path: request.path, query: request.query)
        let canonical = canonicalRequest(hostOnly, signedHeaders: ["host"], payloadHash: Self.unsignedPayload)
        var signature = finish(canonical, stamp: stamp)
        signature.signedHeaders = "host"
        request.query.append(("X-Amz-Signature", signature.signature))
        return signature
    }

    // MARK: - The steps, each as AWS's documentation names it

    /// The lowercase names of the headers to sign, sorted and without repeats; `host` always.
    func signedHeaderNames(_ headers: [(name: String, value: String)]) -> [String] {
        var names = Set(headers.map { $0.name.lowercased() }).subtracting(Self.unsignedHeaders)
        names.insert("host")
        return names.sorted()
    }

    /// Method, encoded path, sorted encoded query, canonical headers, signed header names and
    /// the payload hash, one per line.
    func canonicalRequest(_ request: SigV4Request, signedHeaders: [String], payloadHash: String) -> String {
        [
            request.method,
            AWSPercentEncoding.path(request.path),
            AWSPercentEncoding.canonicalQuery(request.query),
            canonicalHeaders(request, names: signedHeaders),
            signedHeaders.joined(separator: ";"),
            payloadHash,
        ].joined(separator: "\n")
    }

    /// `name:value\n` for each signed header: values trimmed, runs of white space made one
    /// space, a repeated header's values joined by commas in the order given.
    private func canonicalHeaders(_ request: SigV4Request, names: [String]) -> String {
        var values: [String: [String]] = ["host": [request.host]]
        for (name, value) in request.headers {
            let key = name.lowercased()
            guard names.contains(key), key != "host" else { continue }
            values[key, default: []].append(value.split(whereSeparator: \.isWhitespace).joined(separator: " "))
        }
        return names.map { "\($0):\(values[$0, default: []].joined(separator: ","))\n" }.joined()
    }

    private func scope(_ stamp: AmzDate) -> String {
        "\(stamp.date)/\(region)/\(service)/aws4_request"
    }

    /// The string to sign and its signature with the key derived for the day, region and service.
    private func finish(_ canonicalRequest: String, stamp: AmzDate) -> SigV4Signature {
        let stringToSign = [
            "AWS4-HMAC-SHA256", stamp.dateTime, scope(stamp), SHA256.hash(data: Data(canonicalRequest.utf8)).lowercaseHex,
        ].joined(separator: "\n")
        let signature = HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: signingKey(stamp)).lowercaseHex
        return SigV4Signature(canonicalRequest: canonicalRequest, stringToSign: stringToSign, signature: signature)
    }

    /// HMAC of the date, region, service and `aws4_request` in turn, from `AWS4` + the secret.
    private func signingKey(_ stamp: AmzDate) -> SymmetricKey {
        var key = SymmetricKey(data: Data(("AWS4" + credentials.secretAccessKey).utf8))
        for part in [stamp.date, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return key
    }
}

/// A request as the signer sees it: the path and query unencoded, the headers as sent.
public struct SigV4Request: Sendable {
    /// `GET`, `PUT`...
    public var method: String
    /// The `Host` header's value: the host, with `:port` when the URL names one.
    public var host: String
    /// The path, unencoded (`/bucket/a key.jpg`).
    public var path: String
    /// The query's names and values, unencoded, in any order.
    public var query: [(name: String, value: String)]
    /// The headers, in order; a name may repeat.
    public var headers: [(name: String, value: String)]

    /// Creates a request.
    public init(
        method: String, host: String, path: String, query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)] = []
    ) {
        self.method = method
        self.host = host
        self.path = path
        self.query = query
        self.headers = headers
    }

    /// The path and query as they go on the wire, encoded as they were signed.
    public var encodedTarget: String {
        let query = AWSPercentEncoding.canonicalQuery(query)
        return AWSPercentEncoding.path(path) + (query.isEmpty ? "" : "?" + query)
    }

    /// Replaces every header named `name` (in any case) with one.
    mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        headers.append((name, value))
    }
}

/// What a signature was made of: AWS's intermediate values, for tests and for explaining a
/// `SignatureDoesNotMatch`.
public struct SigV4Signature: Sendable {
    /// The canonical request.
    public var canonicalRequest: String
    /// The string to sign.
    public var stringToSign: String
    /// The signature, in hex.
    public var signature: String
    /// The signed header names, `;`-separated.
    public var signedHeaders = ""
    /// The `Authorization` header's value (empty for a presigned URL).
    public var authorization = ""
}

/// A time as SigV4 writes it: `20150830T123600Z`, and the day `20150830`.
struct AmzDate {
    let dateTime: String
    var date: String { String(dateTime.prefix(8)) }

    init(_ date: Date) {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        dateTime =
            "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }
}
