/// An AWS access key: what ``SigV4Signer`` signs with. Its description shows the key id only,
/// so that logging a configuration never prints a secret.
public struct S3Credentials: Sendable, Equatable, CustomStringConvertible {
    /// The access key id (`AKIA...`).
    public var accessKeyID: String
    /// The secret access key.
    public var secretAccessKey: String
    /// The session token of temporary credentials (from STS), else nil.
    public var sessionToken: String?

    /// Creates credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public var description: String {
        "S3Credentials(\(accessKeyID), secret hidden\(sessionToken == nil ? "" : ", with a session token"))"
    }
}
