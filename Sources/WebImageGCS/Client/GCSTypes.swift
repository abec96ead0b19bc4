public import Foundation

/// An object read whole, with what Cloud Storage says of it.
public struct GCSObject: Sendable {
    /// The bytes.
    public var data: Data
    /// Its metadata.
    public var info: GCSObjectInfo
}

/// What Cloud Storage says of an object in the headers of its bytes.
public struct GCSObjectInfo: Sendable, Equatable {
    /// `Content-Type`.
    public var contentType: String?
    /// `Cache-Control`.
    public var cacheControl: String?
    /// The `ETag` Cloud Storage sends.
    public var etag: String?
    /// `Last-Modified`.
    public var lastModified: String?
    /// The generation read (`x-goog-generation`).
    public var generation: Int64?
}

/// One object of a listing.
public struct GCSListedObject: Sendable, Equatable {
    /// The object's name.
    public var name: String
    /// Its size in bytes.
    public var size: Int
    /// Its generation.
    public var generation: Int64?
}

/// One page of a listing and where the next starts.
public struct GCSListPage: Sendable {
    /// The objects of the page, in name order.
    public var objects: [GCSListedObject]
    /// The token of the next page, or nil on the last.
    public var nextPageToken: String?
}
