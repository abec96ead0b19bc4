public import Foundation
public import WebImageCore

/// How a ``GCSClient`` reaches Cloud Storage.
public struct GCSConfiguration: Sendable, Equatable {
    /// Google's JSON API endpoint.
    public static let googleEndpoint = URL(string: "https://storage.googleapis.com")!

    /// The JSON API's base URL: Google's, or an emulator's (`STORAGE_EMULATOR_HOST`, imgproxy's
    /// `IMGPROXY_GCS_ENDPOINT`). Default Google's.
    public var endpoint: URL
    /// How requests are authorised. Default anonymous.
    public var credentials: GCSCredentials
    /// How many times a request is tried in all while it fails transiently (5xx, 429, a lost
    /// connection, a timeout). Default 3.
    public var maximumAttempts: Int
    /// The first back-off between tries; it doubles, with jitter. Default 200 ms.
    public var retryBaseDelay: Duration
    /// How long one request may wait for an answer's head or for each read of its body. Default 30 s.
    public var timeout: Duration
    /// The largest object read whole. Default 100 MiB.
    public var maximumObjectSize: Int

    /// A configuration.
    public init(
        endpoint: URL = Self.googleEndpoint, credentials: GCSCredentials = .anonymous, maximumAttempts: Int = 3,
        retryBaseDelay: Duration = .milliseconds(200), timeout: Duration = .seconds(30), maximumObjectSize: Int = 100 << 20
    ) {
        self.endpoint = endpoint
        self.credentials = credentials
        self.maximumAttempts = max(1, maximumAttempts)
        self.retryBaseDelay = retryBaseDelay
        self.timeout = timeout
        self.maximumObjectSize = maximumObjectSize
    }

    /// The configuration Google's libraries would make here: `STORAGE_EMULATOR_HOST` (an
    /// emulator's `host:port` or URL, reached without credentials) or `endpoint`, and the
    /// credentials of ``GCSCredentials/resolve(key:environment:)``.
    /// - Throws: `invalidArgument` for an endpoint that is not an http(s) URL, or a key that is
    ///   not a service account's.
    public static func fromEnvironment(
        key: String? = nil, endpoint: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(WebImageError) -> GCSConfiguration {
        var configuration = GCSConfiguration(credentials: try GCSCredentials.resolve(key: key, environment: environment))
        let emulator = environment["STORAGE_EMULATOR_HOST"].flatMap { $0.isEmpty ? nil : ($0.contains("://") ? $0 : "http://" + $0) }
        if let text = endpoint.flatMap({ $0.isEmpty ? nil : $0 }) ?? emulator {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw WebImageError(.invalidArgument, "the GCS endpoint \(text) is not an http(s) URL")
            }
            // imgproxy's IMGPROXY_GCS_ENDPOINT may name the API's path (`…/storage/v1/`): the base is before it.
            let base = url.absoluteString.components(separatedBy: "/storage/v1").first ?? url.absoluteString
            configuration.endpoint = URL(string: String(base.reversed().drop { $0 == "/" }.reversed())) ?? url
        }
        return configuration
    }
}
