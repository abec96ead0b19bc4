public import Foundation
public import WebImageCore

/// How requests to Cloud Storage are authorised, found as Google's libraries find them
/// (Application Default Credentials): a key given, the key file `GOOGLE_APPLICATION_CREDENTIALS`
/// names, the metadata server of a Google Cloud machine, else none (a public bucket's objects
/// read anonymously).
public enum GCSCredentials: Sendable, Equatable {
    /// No `Authorization` header: public objects only, or an emulator.
    case anonymous
    /// Tokens for a service account, asked for with a JWT signed by its key.
    case serviceAccount(GCSServiceAccountKey)
    /// Tokens from the metadata server at this base URL (`http://metadata.google.internal`, or
    /// `GCE_METADATA_HOST`'s).
    case metadataServer(URL)
    /// A token got elsewhere, sent as it is.
    case accessToken(String)

    /// The metadata server's address on every Google Cloud machine.
    public static let googleMetadataServer = URL(string: "http://metadata.google.internal")!

    /// The credentials Google's libraries would use here: `key` (a key file's JSON text, as
    /// imgproxy's `IMGPROXY_GCS_KEY`) when given; else the key file `GOOGLE_APPLICATION_CREDENTIALS`
    /// names; else, with `STORAGE_EMULATOR_HOST` set, none; else the metadata server at
    /// `GCE_METADATA_HOST` when set, or at its usual address on a Google Compute Engine machine
    /// (`/sys/class/dmi/id/product_name` says so, as google-auth checks without a request); else none.
    /// - Throws: `invalidArgument` for a key or key file that is not a service account's.
    public static func resolve(key: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(WebImageError) -> GCSCredentials
    {
        if let key, !key.isEmpty { return .serviceAccount(try GCSServiceAccountKey(json: Data(key.utf8))) }
        if let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw WebImageError(.invalidArgument, "GOOGLE_APPLICATION_CREDENTIALS: cannot read \(path)")
            }
            return .serviceAccount(try GCSServiceAccountKey(json: data))
        }
        if environment["STORAGE_EMULATOR_HOST"]?.isEmpty == false { return .anonymous }
        if let host = environment["GCE_METADATA_HOST"], !host.isEmpty, let url = URL(string: "http://\(host)") {
            return .metadataServer(url)
        }
        return isGoogleComputeEngine ? .metadataServer(googleMetadataServer) : .anonymous
    }

    /// Whether this machine says it is a Google Compute Engine instance.
    private static var isGoogleComputeEngine: Bool {
        let product = (try? String(contentsOfFile: "/sys/class/dmi/id/product_name", encoding: .utf8)) ?? ""
        return product.hasPrefix("Google")
    }
}
