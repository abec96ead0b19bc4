import Foundation
import Testing
import WebImageS3
import WebImageTesting
import WebImageTestSupport

/// Our S3 signatures beside botocore's (its `S3SigV4Auth` and `S3SigV4QueryAuth`, run by
/// botocore_sign.py with the same keys, date and request), and AWS's published S3 examples
/// (the S3 API reference's "Signature Calculations for the Authorization Header" and "Query
/// String Authentication" pages: bucket `examplebucket`, key `test.txt`, 2013-05-24).
@Suite("SigV4: S3 requests beside botocore")
struct SigV4ComparisonTests {
    static let awsExampleKeys = S3Credentials(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    static let awsExampleDate = Date(timeIntervalSince1970: 1_369_353_600)

    /// A request signed both ways.
    struct Case {
        var method = "GET"
        var endpoint = "https://examplebucket.s3.amazonaws.com"
        var host = "examplebucket.s3.amazonaws.com"
        var path: String
        var query: [(name: String, value: String)] = []
        var headers: [(name: String, value: String)] = []
        var body = ""
        var credentials = SigV4ComparisonTests.awsExampleKeys
        var region = "us-east-1"
        var date = SigV4ComparisonTests.awsExampleDate
        var unsignedPayload = false
        var expires: Int?

        var json: [String: Any] {
            var object: [String: Any] = [
                "accessKeyID": credentials.accessKeyID, "secretAccessKey": credentials.secretAccessKey, "date": date.timeIntervalSince1970,
                "method": method, "endpoint": endpoint, "path": path, "region": region, "body": body,
                "headers": Dictionary(uniqueKeysWithValues: headers.map { ($0.name, $0.value) }),
                "query": Dictionary(uniqueKeysWithValues: query.map { ($0.name, $0.value) }), "unsignedPayload": unsignedPayload,
            ]
            if let token = credentials.sessionToken { object["sessionToken"] = token }
            if let expires { object["expires"] = expires }
            return object
        }

        /// Ours: the Authorization header, or the presigned URL.
        func sign() -> String {
            let signer = SigV4Signer(credentials: credentials, region: region)
            var request = SigV4Request(method: method, host: host, path: path, query: query, headers: headers)
            if let expires {
                signer.presign(&request, expires: expires, date: date)
                return "https://\(host)\(request.encodedTarget)"
            }
            let hash = unsignedPayload ? SigV4Signer.unsignedPayload : SigV4Signer.payloadHash(Data(body.utf8))
            request.headers.append(("x-amz-content-sha256", hash))
            return signer.sign(&request, payloadHash: hash, date: date).authorization
        }
    }

    static let cases: [Case] = [
        // AWS's GET Object example, with its Range header.
        Case(path: "/test.txt", headers: [("Range", "bytes=0-9")]),
        // A key with spaces, a plus, a repeated slash, dot segments and UTF-8; a version; a session token.
        Case(
            path: "/photos//a b+c/../été.jpg", query: [("versionId", "3/L4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY")],
            credentials: S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret/with+chars", sessionToken: "token/with=signs+")),
        // A PUT with a signed body, a content type and user metadata, path-style on a loopback endpoint.
        Case(
            method: "PUT", endpoint: "http://127.0.0.1:8333", host: "127.0.0.1:8333", path: "/bucket/dir/file.png",
            headers: [("Content-Type", "image/png"), ("x-amz-meta-origin", "a  b"), ("Cache-Control", "max-age=60")], body: "PNG bytes",
            region: "eu-west-1"),
        // The same PUT with an unsigned payload.
        Case(
            method: "PUT", endpoint: "http://127.0.0.1:8333", host: "127.0.0.1:8333", path: "/bucket/dir/file.png",
            headers: [("Content-Type", "image/png")], body: "PNG bytes", region: "eu-west-1", unsignedPayload: true),
        // A listing's query.
        Case(path: "/", query: [("list-type", "2"), ("prefix", "a b/é"), ("continuation-token", "x+y/z=="), ("encoding-type", "url")]),
    ]

    static let presignedCases: [Case] = [
        // AWS's presigned URL example: a day.
        Case(path: "/test.txt", expires: 86400),
        Case(
            path: "/dir/a b é.jpg", query: [("versionId", "v1")],
            credentials: S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "s", sessionToken: "tok/en+"), region: "ap-south-1",
            expires: 600),
    ]

    @Test("AWS's examples: the GET with Range and the presigned URL have the documented signatures")
    func awsExamples() {
        #expect(Self.cases[0].sign().hasSuffix("Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"))
        #expect(Self.presignedCases[0].sign().contains("X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"))
    }

    @Test("header signatures are botocore's, byte for byte")
    func headerSigning() async throws {
        let theirs = try await Botocore.sign(Self.cases.map(\.json))
        #expect(Self.cases.map { $0.sign() } == theirs)
    }

    @Test("presigned URLs carry botocore's parameters and signature")
    func presigning() async throws {
        let theirs = try await Botocore.sign(Self.presignedCases.map(\.json))
        for (ours, theirs) in zip(Self.presignedCases.map { $0.sign() }, theirs) {
            // The same parameters, in whatever order each writes them.
            #expect(try Self.queryItems(ours) == Self.queryItems(theirs))
            #expect(URL(string: ours)?.path == URL(string: theirs)?.path)
        }
    }

    static func queryItems(_ url: String) throws -> [String: String] {
        let items = try #require(URLComponents(string: url)?.queryItems)
        return Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.value ?? "") })
    }
}

/// botocore_sign.py, run by the tests' Python (``TestPython``), which has botocore.
enum Botocore {
    static func sign(_ cases: [[String: Any]]) async throws -> [String] {
        let script = try #require(Bundle.module.url(forResource: "botocore_sign", withExtension: "py"))
        let input = String(decoding: try JSONSerialization.data(withJSONObject: cases), as: UTF8.self)
        let python = TestPython.command
        let process = try ChildProcess(python.executable, python.arguments + [script.path, input])
        let status = try await process.waitForExit()
        #expect(
            status.status == 0, "botocore_sign.py failed (does \(python.executable.path) have botocore? scripts/python-deps.sh installs it)"
        )
        let output = try #require(process.lines.last)
        return try #require(JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String])
    }
}
