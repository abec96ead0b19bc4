public import Foundation

/// An object's address: `s3://BUCKET/KEY`, with a version when one is asked for.
public struct S3Location: Sendable, Hashable, CustomStringConvertible {
    /// The bucket.
    public var bucket: String
    /// The key, unencoded (`photos/a b.jpg`).
    public var key: String
    /// The version asked for (`versionId`), else nil for the current one.
    public var versionID: String?

    /// Creates a location.
    public init(bucket: String, key: String, versionID: String? = nil) {
        self.bucket = bucket
        self.key = key
        self.versionID = versionID
    }

    /// The location an `s3://BUCKET/KEY[?versionId=V]` URL names (the key percent-decoded);
    /// nil for another scheme, an empty bucket or key, a malformed escape, or a key with a `.` or
    /// `..` segment: a store or a front that cleans paths would take `s3://public/../secret/x`
    /// from another bucket than the one an allow-list judged.
    public init?(url: URL) {
        guard url.scheme?.lowercased() == "s3", let bucket = url.host, !bucket.isEmpty,
            let path = AWSPercentEncoding.decode(url.path(percentEncoded: true)), path.count > 1,
            !Self.hasDotSegment(path)
        else { return nil }
        self.bucket = bucket
        key = String(path.dropFirst())
        versionID = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "versionId" }?.value
    }

    /// `s3://BUCKET/KEY`, the key encoded as a URL path, with `?versionId=` when there is one.
    public var url: URL {
        let version = versionID.map { "?versionId=\(AWSPercentEncoding.encode($0))" } ?? ""
        return URL(string: "s3://\(bucket)\(AWSPercentEncoding.path(key))\(version)")!
    }

    public var description: String {
        "s3://\(bucket)/\(key)" + (versionID.map { "?versionId=\($0)" } ?? "")
    }

    /// Whether a decoded path has a `.` or `..` segment.
    public static func hasDotSegment(_ path: String) -> Bool {
        path.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == "." || $0 == ".." }
    }
}

/// What S3 says about an object: the headers of a GET or HEAD.
public struct S3ObjectInfo: Sendable, Equatable {
    /// The entity tag, quotes included (`"5d41..."`), as `If-None-Match` takes it back.
    public var etag: String?
    /// `Last-Modified`.
    public var lastModified: Date?
    /// `Content-Type`.
    public var contentType: String?
    /// The object's whole size (from `Content-Length`, or from `Content-Range` for a range).
    public var size: Int?
    /// `Cache-Control` as stored with the object.
    public var cacheControl: String?
    /// `Expires` as stored with the object.
    public var expires: String?
    /// The version (`x-amz-version-id`), on a versioned bucket.
    public var versionID: String?
    /// User metadata (`x-amz-meta-NAME`), by lowercase `NAME`.
    public var metadata: [String: String] = [:]

    /// Creates a value.
    public init(
        etag: String? = nil, lastModified: Date? = nil, contentType: String? = nil, size: Int? = nil, cacheControl: String? = nil,
        expires: String? = nil, versionID: String? = nil, metadata: [String: String] = [:]
    ) {
        self.etag = etag
        self.lastModified = lastModified
        self.contentType = contentType
        self.size = size
        self.cacheControl = cacheControl
        self.expires = expires
        self.versionID = versionID
        self.metadata = metadata
    }
}

/// An object's bytes (all of them, or the range asked for) and what S3 says about it.
public struct S3Object: Sendable {
    /// The bytes.
    public var data: Data
    /// The headers.
    public var info: S3ObjectInfo
    /// The range answered (`Content-Range`), when a range was asked for.
    public var contentRange: String?
}

/// What a GET may add: a byte range and the validators that turn it into a 304.
public struct S3GetOptions: Sendable {
    /// `Range`: `bytes=0-1023`, `bytes=-500`.
    public var range: String?
    /// `If-None-Match`: an ETag the caller holds; a match answers `notModified`.
    public var ifNoneMatch: String?
    /// `If-Modified-Since`: a date the caller's copy is from; no newer object answers `notModified`.
    public var ifModifiedSince: Date?

    /// Creates options.
    public init(range: String? = nil, ifNoneMatch: String? = nil, ifModifiedSince: Date? = nil) {
        self.range = range
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
    }
}

/// What a PUT (or a completed multipart upload) stored.
public struct S3PutResult: Sendable, Equatable {
    /// The new object's entity tag.
    public var etag: String?
    /// Its version, on a versioned bucket.
    public var versionID: String?
}

/// One uploaded part of a multipart upload: what completing it needs back.
public struct S3UploadedPart: Sendable, Equatable {
    /// The part's number, 1 to 10000.
    public var partNumber: Int
    /// The ETag S3 answered the part with.
    public var etag: String

    /// Creates a value.
    public init(partNumber: Int, etag: String) {
        self.partNumber = partNumber
        self.etag = etag
    }
}

/// One object of a listing.
public struct S3ListedObject: Sendable, Equatable {
    /// The key, decoded.
    public var key: String
    /// Its size in bytes.
    public var size: Int
    /// Its entity tag.
    public var etag: String?
    /// When it was last written.
    public var lastModified: Date?
}

/// A multipart upload started and not yet completed or aborted.
public struct S3PendingUpload: Sendable, Equatable {
    /// The key the object will have.
    public var key: String
    /// The upload's id, to abort or complete it.
    public var uploadID: String
    /// When it was started.
    public var initiated: Date?
}

/// One page of ListObjectsV2.
public struct S3ListPage: Sendable, Equatable {
    /// The objects, in key order.
    public var objects: [S3ListedObject]
    /// The prefixes rolled up at the delimiter (the "folders").
    public var commonPrefixes: [String]
    /// The token for the next page; nil on the last.
    public var nextContinuationToken: String?
}
