import Foundation
import Testing
import WebImageS3

/// AWS's SigV4 test suite (aws4_testsuite/, as botocore keeps it at commit 0e6e240 under
/// tests/unit/auth/aws4_testsuite, Apache 2.0: see its LICENSE and NOTICE): for each request
/// (`.req`), the canonical request (`.creq`), string to sign (`.sts`) and `Authorization`
/// (`.authz`) that AWS's reference signer produced with the suite's key, date, region and
/// service. Left out, as S3 signs them otherwise: `normalize-path/` (S3 keeps `//` and `..` in
/// a key) and `post-sts-header-after` (S3 signs the session token with the rest).
@Suite("SigV4: AWS's test suite")
struct SigV4TestSuiteTests {
    static let credentials = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    /// 20150830T123600Z, the suite's date.
    static let date = Date(timeIntervalSince1970: 1_440_938_160)

    static var cases: [String] {
        let root = Bundle.module.url(forResource: "aws4_testsuite", withExtension: nil)!
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)!.compactMap { $0 as? URL }
        return files.filter { $0.pathExtension == "req" }.map { $0.deletingPathExtension().path }
            .filter { !$0.hasSuffix("post-sts-header-after") }.sorted()
    }

    @Test("every request of the suite signs to AWS's canonical request, string to sign and Authorization", arguments: cases)
    func suite(_ base: String) throws {
        let expected = { (suffix: String) in try String(contentsOfFile: base + "." + suffix, encoding: .utf8) }
        var request = try Self.parse(try expected("req"))
        let canonical = try expected("creq")
        // The suite's session token is given only in the canonical request, as botocore's runner reads it.
        let token = canonical.split(separator: "\n").first { $0.hasPrefix("x-amz-security-token:") }?.dropFirst(
            "x-amz-security-token:".count)
        var credentials = Self.credentials
        credentials.sessionToken = token.map(String.init)
        let signer = SigV4Signer(credentials: credentials, region: "us-east-1", service: "service")
        let payloadHash = SigV4Signer.payloadHash(Data(Self.body(try expected("req")).utf8))
        let signature = signer.sign(&request, payloadHash: payloadHash, date: Self.date)
        #expect(signature.canonicalRequest == canonical)
        #expect(signature.stringToSign == (try expected("sts")))
        #expect(signature.authorization == (try expected("authz")))
    }

    /// A `.req` file: the request line, headers (a line that starts with white space goes on
    /// the previous header), a blank line and the body. The path is as the request would
    /// carry it unencoded; the query is encoded, so it is decoded here for the signer.
    static func parse(_ text: String) throws -> SigV4Request {
        let head = text.components(separatedBy: "\n\n")[0]
        var lines = head.components(separatedBy: "\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        let target = requestLine[1...].dropLast().joined(separator: " ")
        let (path, query) =
            target.firstIndex(of: "?").map { (String(target[..<$0]), String(target[target.index(after: $0)...])) } ?? (target, "")
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            if line.first == " " || line.first == "\t" {
                headers[headers.count - 1].value += "\n" + line
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
            }
        }
        let host = headers.first { $0.name.lowercased() == "host" }?.value ?? ""
        let items: [(name: String, value: String)] = query.split(separator: "&").map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (AWSPercentEncoding.decode(parts[0])!, parts.count > 1 ? AWSPercentEncoding.decode(parts[1])! : "")
        }
        return SigV4Request(
            method: String(requestLine[0]), host: host, path: path, query: items, headers: headers.filter { $0.name.lowercased() != "host" }
        )
    }

    static func body(_ text: String) -> String {
        let parts = text.components(separatedBy: "\n\n")
        return parts.count > 1 ? parts[1...].joined(separator: "\n\n") : ""
    }
}
