import Foundation
import Testing
import WebImageCore
@testable import WebImageGCS
import WebImageTestSupport
import WebImageTesting
import _CryptoExtras

/// Tokens as Google's libraries get them. No Google server is reachable here: the token
/// endpoint and the metadata server are the project's origin server on 127.0.0.1, which
/// records what it is sent, and a service account's JWT is checked by Google's own Python
/// library (google-auth's `jwt.decode`, with the key's public half and the audience), so the
/// assertion is what Google's token endpoint verifies
/// (https://developers.google.com/identity/protocols/oauth2/service-account#jwt-auth).
@Suite("GCS credentials")
struct GCSCredentialTests {
    /// Runs `body` with a client on `configuration`, shut down whatever `body` does.
    static func using(_ configuration: GCSConfiguration, _ body: (GCSClient) async throws -> Void) async throws {
        let client = GCSClient(configuration: configuration)
        var failure: (any Error)?
        do { try await body(client) } catch { failure = error }
        try await client.shutdown()
        if let failure { throw failure }
    }

    /// A 2048-bit RSA key made for these tests only (`openssl genpkey -algorithm RSA`): fixed,
    /// since swift-crypto 3.12's key generation leaks a bignum each time, which the
    /// AddressSanitizer run reports.
    static let testKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQC8gKelaYthfcnS
        +rj6GaO2f0YEILit3rGcpmuJwFWDIlmMUkeoc2EZ1Goq6ggWVeU7TV+Tno7DI4Ig
        jcCeOWQQhiFXqCYT1uwxqZPJtSqooTJZTKlJckl7PeYA2TwsA3T82c+h+jEif++4
        P1eulE5dIR5vZ2fq2UpuNmLpqVWZsXCEMcTNQS3xXmdgOeSB7vjwSCjbj6cGsenr
        hNbVPT9k0EMvWmfL429+LEu6oWZWRCHZbrElIq0qlfkGD0e/eT7w9IlU/8fNDWP4
        YfTunuDxj8IgCr9woS9mQMGMZ4FmDtMrd6Kb5p5bEStCtN+Zk06ZNyIH72S2sgwI
        PsoQOxB9AgMBAAECggEAB8eUg6xjMvsWxwUPeMzxl4DRsi5qiMx5zpIEuqrsLI0Q
        noyvxek7Hu6IEizV+BwD6apkESrYT//paTAIfM84DMGIYz5+kc+LMHKD9a1rLQn4
        Erzp+KzFkRdJJIxSoitjWuMfYVs6x2Z5zYQZuYwH3uqUv7rIDGZ63qkSdHvHW2An
        9eJwgDJ/PS9q79rSprfZrDbfLJpSsYAaCM9IW7xM186RslGdASiCoZLz9q1Q//xI
        YyA3joMIQNiBiymzsWWNkxao92TGHuXfKYfU/MfFNWMvwafPiwHW0/j4V90WWoou
        hrIMaiPd+cx5m/uikp8Jc5c2TJHHJF2zDgdpfj8uAQKBgQDhgX5074I25+FmdnRv
        QSISgUk/61MkVUQwuQaqxysvlscgzDlJWHpZmrfvIURxfIc+oEBkoAqtB2+FmLI9
        xYruv6sIzOzhpyvYjpvE5R6JfGsUaSb9ld7cOJpbWojAnrPfiwXnYvfeQkSv0Rmm
        g6uw48oURuomPzx2qsuaPAmifQKBgQDV/jDBaFW+6sKVCR9lodyxbKYj7i2TTAI5
        K42zwVfVcarRJGtQ96H9M3Kzqcgg/8J74EXHL6Q+haePyDPbYFc7zluA887kkew7
        8Qby9GTe+qGHnBkMkqwA5kHIJds7AUbVKV6gKKZtmF2cRF1voEUrRE5HoOFOEeqr
        wFxNsvSGAQKBgQCVQzRjzEDBfPx56MAq/87Atui4MVhn/TRUl7PtCEXyivelIuhs
        Pu9FLh6/XqLCB24xqrrUoAZQ/1H2+NpJ/t52J1HbUmEc/50LC2HZktqCoGL0MKHJ
        ShEobSLmgudvr9xZg9jVjnGIoQ573Yj/6bmULUKN516HEGZCGc0IeuLZtQKBgQC+
        cN1LAmNs6NgKcnfypr4VWC/zQgBlWfuQjWYqVyKn3eS7A8JN6FPNVn/5zFtCotqe
        C9WNkqSEz8VzfCRKU87OdrOQa2nwmLy4C6S3izBKEJq4aP8R5WYV1tUsHiSgul4j
        ThHcTtDuL+7/JwhQUz27Z6qSrGZWaDOEbki3DU/4AQKBgBQmtkVErJJfAVyvDJD5
        wCXZMT67apB8gQ4HdPomXH7u5HLSFhdnwR88r2BnCz4DfYMRnz2Ml3OKE9UY0ofq
        9ZOa6ZuruK31aiye+b56W63FgJbkSeg9Qw7Uf5ECRcfsDBnzgXxCnqga8cWTIwIk
        KV8J5GsoMi3YpcsM2OcVo/Kh
        -----END PRIVATE KEY-----
        """

    static func serviceAccount(tokenURI: URL) throws -> (key: GCSServiceAccountKey, publicPEM: String, json: String) {
        let privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: Self.testKeyPEM)
        let key = GCSServiceAccountKey(
            clientEmail: "reader@project.iam.gserviceaccount.com", privateKey: privateKey.pemRepresentation, privateKeyID: "key-1",
            tokenURI: tokenURI)
        let fields: [String: String] = [
            "type": "service_account", "client_email": key.clientEmail, "private_key": key.privateKey, "private_key_id": "key-1",
            "token_uri": tokenURI.absoluteString,
        ]
        let json = String(decoding: try JSONSerialization.data(withJSONObject: fields), as: UTF8.self)
        return (key, privateKey.publicKey.pemRepresentation, json)
    }

    @Test("a service account: its JWT verified by google-auth, the token asked for once and sent as Bearer")
    func serviceAccount() async throws {
        let server = try await OriginServer.start()
        server.route("/token") { _ in .ok(Array(#"{"access_token":"token-1","expires_in":3600,"token_type":"Bearer"}"#.utf8)) }
        server.route("/storage/v1/b/photos/o/a.jpg") { _ in .ok(Array("bytes".utf8), contentType: "image/jpeg") }
        let account = try Self.serviceAccount(tokenURI: server.url("/token"))
        try await Self.using(GCSConfiguration(endpoint: server.url("/"), credentials: .serviceAccount(account.key))) { client in
            for _ in 0..<2 { _ = try await client.getObject(GCSLocation(bucket: "photos", object: "a.jpg")) }
        }
        #expect(server.requestCount("/token") == 1, "the token is kept")
        #expect(server.requests(to: "/storage/v1/b/photos/o/a.jpg").allSatisfy { $0.header("Authorization") == "Bearer token-1" })
        let form = String(decoding: try #require(server.requests(to: "/token").first).body, as: UTF8.self)
        let fields = Dictionary(
            uniqueKeysWithValues: form.split(separator: "&").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
                return (parts[0], parts.count > 1 ? parts[1] : "")
            })
        #expect(fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer")
        let claims = try await Self.decodedByGoogleAuth(
            try #require(fields["assertion"]), publicPEM: account.publicPEM, audience: server.url("/token").absoluteString)
        #expect(claims["iss"] as? String == "reader@project.iam.gserviceaccount.com")
        #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/devstorage.read_write")
        let issued = try #require(claims["iat"] as? Int)
        #expect(claims["exp"] as? Int == issued + 3600)
        try await server.shutdown()
    }

    /// The claims of `assertion` as google-auth's `jwt.decode` reads them, which checks the RS256
    /// signature against `publicPEM`, the audience and the times.
    static func decodedByGoogleAuth(_ assertion: String, publicPEM: String, audience: String) async throws -> [String: Any] {
        let script = """
            import json, sys
            from google.auth import jwt
            print(json.dumps(jwt.decode(sys.argv[1], certs=sys.argv[2], audience=sys.argv[3])))
            """
        let python = TestPython.command
        let process = try ChildProcess(python.executable, python.arguments + ["-c", script, assertion, publicPEM, audience])
        let status = try await process.waitForExit()
        #expect(status.status == 0, "google-auth refused the JWT: \(process.lines.suffix(5).joined(separator: "\n"))")
        let output = try #require(process.lines.last)
        return try #require(JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    @Test("the metadata server (GCE_METADATA_HOST): asked with Metadata-Flavor: Google")
    func metadataServer() async throws {
        let server = try await OriginServer.start()
        server.route("/computeMetadata/v1/instance/service-accounts/default/token") { request in
            guard request.header("Metadata-Flavor") == "Google" else { return OriginResponse(status: 403) }
            return .ok(Array(#"{"access_token":"machine-token","expires_in":1800,"token_type":"Bearer"}"#.utf8))
        }
        server.route("/storage/v1/b/photos/o/a.jpg") { _ in .ok(Array("bytes".utf8), contentType: "image/jpeg") }
        let host = "127.0.0.1:\(server.url("/").port ?? 0)"
        let credentials = try GCSCredentials.resolve(environment: ["GCE_METADATA_HOST": host])
        #expect(credentials == .metadataServer(URL(string: "http://\(host)")!))
        try await Self.using(GCSConfiguration(endpoint: server.url("/"), credentials: credentials)) { client in
            _ = try await client.getObject(GCSLocation(bucket: "photos", object: "a.jpg"))
        }
        #expect(server.requests(to: "/storage/v1/b/photos/o/a.jpg").first?.header("Authorization") == "Bearer machine-token")
        try await server.shutdown()
    }

    @Test("the chain: a key given, then GOOGLE_APPLICATION_CREDENTIALS' file, then the emulator's none; a bad token answer is an error")
    func chain() async throws {
        let directory = try TemporaryDirectory("gcs-credentials")
        let account = try Self.serviceAccount(tokenURI: URL(string: "http://127.0.0.1:9/token")!)
        let file = directory.url.appendingPathComponent("key.json")
        try account.json.write(to: file, atomically: true, encoding: .utf8)
        #expect(try GCSCredentials.resolve(key: account.json, environment: [:]) == .serviceAccount(account.key))
        #expect(try GCSCredentials.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path]) == .serviceAccount(account.key))
        #expect(try GCSCredentials.resolve(environment: ["STORAGE_EMULATOR_HOST": "127.0.0.1:1"]) == .anonymous)
        #expect(throws: WebImageError.self) { try GCSCredentials.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent"]) }

        let server = try await OriginServer.start()
        server.route("/token") { _ in OriginResponse(status: 400, body: Array(#"{"error":"invalid_grant"}"#.utf8)) }
        let refused = try Self.serviceAccount(tokenURI: server.url("/token"))
        try await Self.using(GCSConfiguration(endpoint: server.url("/"), credentials: .serviceAccount(refused.key))) { client in
            let error = await #expect(throws: WebImageError.self) { try await client.getObject(GCSLocation(bucket: "b", object: "o")) }
            #expect(error?.code == .badStatus(400) && error?.message?.contains("invalid_grant") == true)
        }
        try await server.shutdown()
    }
}
