import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import Synchronization
import WebImageCore
import WebImageDownloader
import _CryptoExtras

/// OAuth 2.0 access tokens for ``GCSCredentials``, each kept until five minutes before it
/// expires. A service account's token is asked for with a JWT it signs (RFC 7523, RS256, the
/// `devstorage.read_write` scope), a machine's from the metadata server with
/// `Metadata-Flavor: Google`.
final class GCSTokenSource: Sendable {
    private let credentials: GCSCredentials
    private let httpClient: HTTPClient
    private let timeout: Duration
    /// The token kept and when to stop using it. A lock around two values read on every
    /// request; two requests that find it stale at once may both ask for a new one, which is
    /// harmless and rarer than an hour.
    private let kept = Mutex<(token: String, until: ContinuousClock.Instant)?>(nil)

    /// The scope asked for: reading sources and lists, writing shards.
    static let scope = "https://www.googleapis.com/auth/devstorage.read_write"

    init(credentials: GCSCredentials, httpClient: HTTPClient, timeout: Duration) {
        self.credentials = credentials
        self.httpClient = httpClient
        self.timeout = timeout
    }

    /// The `Authorization` header's value, or nil for anonymous requests.
    func authorization() async throws(WebImageError) -> String? {
        switch credentials {
        case .anonymous: return nil
        case .accessToken(let token): return "Bearer \(token)"
        case .serviceAccount, .metadataServer:
            if let kept = kept.withLock({ $0 }), ContinuousClock.now < kept.until { return "Bearer \(kept.token)" }
            let (token, lifetime) = try await fetchToken()
            kept.withLock { $0 = (token, ContinuousClock.now + .seconds(max(0, lifetime - 300))) }
            return "Bearer \(token)"
        }
    }

    private func fetchToken() async throws(WebImageError) -> (String, Int) {
        var request: HTTPClientRequest
        switch credentials {
        case .serviceAccount(let key):
            let assertion = try Self.assertion(key, issuedAt: Date())
            request = HTTPClientRequest(url: key.tokenURI.absoluteString)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
            request.body = .bytes(ByteBuffer(string: form))
        case .metadataServer(let base):
            request = HTTPClientRequest(url: base.absoluteString + "/computeMetadata/v1/instance/service-accounts/default/token")
            request.headers.add(name: "Metadata-Flavor", value: "Google")
        case .anonymous, .accessToken:
            throw WebImageError(.invalidArgument, "these credentials ask for no token")
        }
        let url = URL(string: request.url) ?? GCSCredentials.googleMetadataServer
        let body: Data
        do {
            let response = try await httpClient.execute(request, timeout: .init(timeout))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            body = Data(buffer: bytes)
            guard response.status.code == 200 else {
                let text = String(decoding: body.prefix(512), as: UTF8.self)
                throw WebImageError(.badStatus(Int(response.status.code)), "a token from \(url.absoluteString): \(text)")
            }
        } catch let error as WebImageError {
            throw error
        } catch {
            throw DownloadResponsePolicy.classify(error, url: url)
        }
        guard let fields = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
            let token = fields["access_token"] as? String, !token.isEmpty
        else { throw WebImageError(.badServerResponse, "\(url.absoluteString) answered no access_token") }
        return (token, (fields["expires_in"] as? NSNumber)?.intValue ?? 3600)
    }

    /// The signed JWT a service account asks for a token with (RFC 7523 section 2.1):
    /// `base64url(header).base64url(claims).base64url(RS256 signature)`.
    static func assertion(_ key: GCSServiceAccountKey, issuedAt: Date) throws(WebImageError) -> String {
        var header: [String: String] = ["alg": "RS256", "typ": "JWT"]
        if let id = key.privateKeyID { header["kid"] = id }
        let now = Int(issuedAt.timeIntervalSince1970)
        let claims: [String: Any] = [
            "iss": key.clientEmail, "scope": scope, "aud": key.tokenURI.absoluteString, "iat": now, "exp": now + 3600,
        ]
        let signingInput = base64URL(json(header)) + "." + base64URL(json(claims))
        let signature: Data
        do {
            let privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: key.privateKey)
            signature = try privateKey.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5).rawRepresentation
        } catch {
            throw WebImageError(.invalidArgument, "the service account's private key cannot sign: \(error)", underlying: error)
        }
        return signingInput + "." + base64URL(signature)
    }

    private static func json(_ object: Any) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    }

    /// URL-safe base64 without padding (RFC 7515's base64url).
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
