public import Foundation
import WebImageS3

/// Which rows of a list may be loaded, judged before anything is read. A list comes from
/// strangers (LAION's rows are whatever the web linked to), and the command can read more than
/// the web: `file:` rows would copy local files into a dataset, `s3://` rows would fetch with the
/// crawler's own credentials, `data:` rows carry their bytes. So rows are `http` and `https`
/// only, unless `--allowed-url-schemes` names others; `s3` rows then only from the buckets
/// `--allowed-buckets` names. `--block-private-addresses` judges the addresses of the web rows
/// this lets through.
public struct RowSchemes: Sendable, Equatable {
    /// The schemes allowed, lower-cased.
    public var schemes: Set<String> = Self.web
    /// The buckets `s3://` rows may name.
    public var buckets: Set<String> = []

    /// The schemes a list may hold by default.
    public static let web: Set<String> = ["http", "https"]
    /// The schemes `--allowed-url-schemes` may add.
    public static let known: Set<String> = ["http", "https", "data", "file", "s3"]

    /// Reads `--allowed-url-schemes` and `--allowed-buckets` (comma-separated).
    /// - Throws: a usage error for a scheme the command cannot load, or `s3` without buckets.
    public init(schemes text: String?, buckets bucketText: String?) throws(DatasetError) {
        if let text {
            schemes = Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty })
        }
        buckets = Set(bucketText?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } ?? [])
        if let unknown = schemes.subtracting(Self.known).sorted().first {
            throw DatasetError("--allowed-url-schemes takes http, https, data, file or s3, not \(unknown)")
        }
        if schemes.contains("s3"), buckets.isEmpty {
            throw DatasetError("--allowed-url-schemes s3 needs --allowed-buckets naming the buckets rows may read")
        }
        if !buckets.isEmpty, !schemes.contains("s3") { throw DatasetError("--allowed-buckets needs s3 in --allowed-url-schemes") }
    }

    /// The default: `http` and `https` rows only.
    public init() {}

    /// Whether loaders for `scheme` are needed at all.
    /// Why the row `url` may not be loaded, or nil when it may.
    public func refusal(for url: URL) -> String? {
        let scheme = url.scheme?.lowercased() ?? ""
        guard schemes.contains(scheme) else {
            return "\(scheme): rows are not loaded (rows are http(s) unless --allowed-url-schemes names \(scheme))"
        }
        guard scheme == "s3" else { return nil }
        guard let location = S3Location(url: url) else { return "not an S3 object's URL (a bucket, a key without dot segments)" }
        guard buckets.contains(location.bucket) else { return "the bucket \(location.bucket) is not in --allowed-buckets" }
        return nil
    }
}
