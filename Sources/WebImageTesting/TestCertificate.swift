import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A self-signed certificate for 127.0.0.1 and localhost, made once per process with a fresh
/// P-256 key: no private key is stored in the source or in any binary. Valid from an hour ago for
/// a day. A client that verifies certificates refuses it unless it trusts ``certificatePEM``.
public enum TestCertificate {
    private struct Material: Sendable {
        let certificate: Certificate
        /// The key's DER bytes (swift-crypto's key type is not `Sendable`).
        let privateKeyDER: [UInt8]
    }

    private static let material: Result<Material, any Error> = Result {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("127.0.0.1") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(86_400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])), .dnsName("localhost")])
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        return Material(certificate: certificate, privateKeyDER: Array(key.derRepresentation))
    }

    /// The certificate in PEM, for a client that should trust it (a `--cacert` file).
    public static func certificatePEM() throws -> String {
        try material.get().certificate.serializeAsPEM().pemString
    }

    /// The certificate and key in NIOSSL's form, for a server.
    static func serverIdentity() throws -> (certificate: NIOSSLCertificate, privateKey: NIOSSLPrivateKey) {
        let material = try material.get()
        var serializer = DER.Serializer()
        try serializer.serialize(material.certificate)
        return (
            try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der),
            try NIOSSLPrivateKey(bytes: material.privateKeyDER, format: .der)
        )
    }
}
