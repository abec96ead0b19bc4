import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// Self-signed certificates made once per process with fresh P-256 keys: no private key is
/// stored in the source or in any binary. The server's names 127.0.0.1 and localhost; a client
/// that verifies certificates refuses it unless it trusts ``certificatePEM(_:)``.
public enum TestCertificate {
    /// Which certificate.
    public enum Kind: Sendable, CaseIterable {
        /// A server certificate valid from an hour ago for a day.
        case server
        /// The same names, but it expired a day ago.
        case expiredServer
        /// A client certificate for mutual TLS (`--cert`, `--key`), valid from an hour ago for a day.
        case client
    }

    private struct Material: Sendable {
        let certificate: Certificate
        /// The key's DER bytes (swift-crypto's key type is not `Sendable`).
        let privateKeyDER: [UInt8]
        let privateKeyPEM: String
    }

    private static let materials: [Kind: Result<Material, any Error>] = Dictionary(
        uniqueKeysWithValues: Kind.allCases.map { kind in (kind, Result { try make(kind) }) })

    private static func make(_ kind: Kind) throws -> Material {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(kind == .client ? "webimage test client" : "127.0.0.1") }
        let now = Date()
        let start = kind == .expiredServer ? now.addingTimeInterval(-2 * 86_400) : now.addingTimeInterval(-3600)
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: start,
            notValidAfter: start.addingTimeInterval(86_400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                if kind != .client {
                    SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])), .dnsName("localhost")])
                }
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        return Material(certificate: certificate, privateKeyDER: Array(key.derRepresentation), privateKeyPEM: key.pemRepresentation)
    }

    private static func material(_ kind: Kind) throws -> Material {
        try materials[kind]!.get()
    }

    /// The certificate in PEM, for a client that should trust it (a `--cacert` file) or present
    /// it (a `--cert` file).
    public static func certificatePEM(_ kind: Kind = .server) throws -> String {
        try material(kind).certificate.serializeAsPEM().pemString
    }

    /// The private key in PEM (a `--key` file).
    public static func privateKeyPEM(_ kind: Kind) throws -> String {
        try material(kind).privateKeyPEM
    }

    /// The certificate in NIOSSL's form, for a server's trust roots.
    static func certificate(_ kind: Kind) throws -> NIOSSLCertificate {
        var serializer = DER.Serializer()
        try serializer.serialize(try material(kind).certificate)
        return try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)
    }

    /// The certificate and key in NIOSSL's form, for a server.
    static func serverIdentity(_ kind: Kind = .server) throws -> (certificate: NIOSSLCertificate, privateKey: NIOSSLPrivateKey) {
        (try certificate(kind), try NIOSSLPrivateKey(bytes: try material(kind).privateKeyDER, format: .der))
    }
}
