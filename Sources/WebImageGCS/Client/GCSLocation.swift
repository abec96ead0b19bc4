public import Foundation

/// An object in Google Cloud Storage, `gs://BUCKET/OBJECT`, and a generation of it when one is
/// named (`gs://BUCKET/OBJECT?generation=N` as a URL; imgproxy's sources write `gs://BUCKET/OBJECT?N`).
public struct GCSLocation: Sendable, Hashable, CustomStringConvertible {
    /// The bucket.
    public var bucket: String
    /// The object's name, which may hold `/`.
    public var object: String
    /// A generation of the object, or nil for the live one.
    public var generation: Int64?

    /// A location.
    public init(bucket: String, object: String, generation: Int64? = nil) {
        self.bucket = bucket
        self.object = object
        self.generation = generation
    }

    /// The location of a `gs://BUCKET/OBJECT` URL (the object percent-decoded, `?generation=N`
    /// read); nil for another scheme or without a bucket or an object.
    public init?(url: URL) {
        guard url.scheme?.lowercased() == "gs", let bucket = url.host, !bucket.isEmpty else { return nil }
        let object = String(url.path(percentEncoded: false).drop { $0 == "/" })
        guard !object.isEmpty else { return nil }
        self.bucket = bucket
        self.object = object
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems
        generation = query?.first { $0.name == "generation" }?.value.flatMap { Int64($0) }
    }

    /// `gs://BUCKET/OBJECT` with the object percent-encoded as a path, and its generation.
    public var url: URL {
        var components = URLComponents()
        components.scheme = "gs"
        components.host = bucket
        components.path = "/" + object
        if let generation { components.queryItems = [URLQueryItem(name: "generation", value: String(generation))] }
        return components.url ?? URL(string: "gs://\(bucket)/")!
    }

    /// `gs://BUCKET/OBJECT` as written.
    public var description: String { "gs://\(bucket)/\(object)" }

    /// The object's name escaped as one path segment of the JSON API (`/` too).
    var escapedObject: String {
        object.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? object
    }

    /// RFC 3986's unreserved characters: all that stays as it is in a segment or a query value.
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
