public import Foundation
public import WebImageCore

/// A service account's key, as Google writes it in the JSON file it hands out
/// (`"type": "service_account"`): the account's address, its RSA private key in PEM, the key's
/// id, and where tokens are asked for.
public struct GCSServiceAccountKey: Sendable, Equatable {
    /// The account's address, the JWT's issuer.
    public var clientEmail: String
    /// The private key in PEM (PKCS#8 or PKCS#1).
    public var privateKey: String
    /// The key's id, the JWT header's `kid`.
    public var privateKeyID: String?
    /// The OAuth token endpoint. Default Google's.
    public var tokenURI: URL

    /// A key.
    public init(clientEmail: String, privateKey: String, privateKeyID: String? = nil, tokenURI: URL = Self.googleTokenURI) {
        self.clientEmail = clientEmail
        self.privateKey = privateKey
        self.privateKeyID = privateKeyID
        self.tokenURI = tokenURI
    }

    /// Google's OAuth 2.0 token endpoint.
    public static let googleTokenURI = URL(string: "https://oauth2.googleapis.com/token")!

    /// The key in a JSON key file's text.
    /// - Throws: `invalidArgument` when it is not JSON, not a service account's, or lacks a field.
    public init(json: Data) throws(WebImageError) {
        let notAKey = WebImageError(
            .invalidArgument, "not a service account's JSON key (type service_account, client_email, private_key)")
        guard let fields = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any],
            fields["type"] as? String == "service_account", let email = fields["client_email"] as? String,
            let key = fields["private_key"] as? String
        else { throw notAKey }
        let token = (fields["token_uri"] as? String).flatMap { URL(string: $0) } ?? Self.googleTokenURI
        self.init(clientEmail: email, privateKey: key, privateKeyID: fields["private_key_id"] as? String, tokenURI: token)
    }
}
