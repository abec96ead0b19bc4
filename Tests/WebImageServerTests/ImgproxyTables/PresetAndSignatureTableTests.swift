import Foundation
import Testing
import WebImage
import WebImageTesting
@testable import WebImageServer
import WebImageTestSupport

/// imgproxy's preset tests as ours: `options/parser/presets_test.go` at v4 (eef3b312),
/// `PresetsTestSuite`: how `IMGPROXY_PRESETS` entries are read (``OptionsParser/presets(parsing:separator:)``)
/// and checked at start-up (``OptionsParser/validatePresets()``, which
/// ``ImageServerConfiguration/validate()`` and the server's start run).
@Suite("imgproxy's tables: presets (options/parser/presets_test.go)")
struct ImgproxyPresetTableTests {
    @Test("TestParsePreset and TestValidatePresets: a preset read and applied")
    func parsed() throws {
        let presets = try OptionsParser.presets(parsing: ["test=resize:fit:100:200/sharpen:2"])
        #expect(presets == ["test": "resize:fit:100:200/sharpen:2"])
        let parser = OptionsParser(presets: presets)
        try parser.validatePresets()
        let options = try parser.parse(["pr:test"])
        #expect(options.resizingType == .fit && options.width == 100 && options.height == 200 && options.sharpen == 2)
    }

    @Test(
        "TestParsePresetInvalidString, ...EmptyName, ...EmptyValue, ...InvalidValue: each refused",
        arguments: ["resize:fit:100:200/sharpen:2", "=resize:fit:100:200/sharpen:2", "test=", "test=resize:fit:100:200/sharpen:2/blur"])
    func refused(_ entry: String) {
        #expect(throws: ProxyError.self, "\(entry)") { try OptionsParser.presets(parsing: [entry]) }
    }

    @Test("TestParsePresetEmptyString and TestParsePresetComment: nothing")
    func skipped() throws {
        #expect(try OptionsParser.presets(parsing: ["   "]).isEmpty)
        #expect(try OptionsParser.presets(parsing: ["#  test=resize:fit:100:200/sharpen:2"]).isEmpty)
    }

    @Test("TestValidatePresetsInvalid: a preset whose options do not parse stops the start, in the library too")
    func invalid() throws {
        let presets = try OptionsParser.presets(parsing: ["test=resize:fit:-1:-2/sharpen:2"])
        #expect(throws: ProxyError.self) { try OptionsParser(presets: presets).validatePresets() }
        var configuration = ServerHarness.configuration()
        configuration.presets = presets
        #expect(throws: WebImageError.self) { try configuration.validate() }
        #expect(throws: WebImageError.self) { try ImageServer(configuration: configuration) }
    }
}

/// imgproxy's signature tests as ours: `security/signature_test.go` at v4 (eef3b312),
/// `SignatureTestSuite`, with its key `test-key`, salt `test-salt` and path `asd` (which its
/// `signatureFor` signs as `/asd`, re-adding the leading slash, as ours does); the expected
/// signatures are imgproxy's.
@Suite("imgproxy's tables: signatures (security/signature_test.go)")
struct ImgproxySignatureTableTests {
    static let first = SigningKey(key: Array("test-key".utf8), salt: Array("test-salt".utf8))
    static let second = SigningKey(key: Array("test-key2".utf8), salt: Array("test-salt2".utf8))

    @Test("TestVerifySignature, ...Truncated, ...Invalid, ...MultiplePairs")
    func verify() {
        let signer = URLSigner(keys: [Self.first])
        #expect(signer.isValid("oWaL7QoW5TsgbuiS9-5-DI8S3Ibbo1gdB2SteJh3a20", for: "asd"))
        #expect(URLSigner(keys: [Self.first], signatureSize: 8).isValid("oWaL7QoW5Ts", for: "asd"))
        #expect(!signer.isValid("oWaL7QoW5Ts", for: "asd"))
        let pairs = URLSigner(keys: [Self.first, Self.second])
        #expect(pairs.isValid("jYz1UZ7j1BCdSzH3pZhaYf0iuz0vusoOTdqJsUT6WXI", for: "asd"))
        #expect(pairs.isValid("oWaL7QoW5TsgbuiS9-5-DI8S3Ibbo1gdB2SteJh3a20", for: "asd"))
        #expect(!pairs.isValid("dtLwhdnPPis", for: "asd"))
    }

    @Test("TestVerifySignatureTrusted: a trusted signature is taken as it is, another is refused")
    func trusted() async throws {
        var configuration = ServerHarness.configuration()
        configuration.signingKeys = [Self.first]
        configuration.trustedSignatures = ["truested"]
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let source = harness.origin.url("/a.jpg").absoluteString
            #expect(try await harness.get("/truested/w:10/plain/\(source)").status == 200)
            #expect(try await harness.get("/untrusted/w:10/plain/\(source)").status == 403)
        }
        // Without keys: a first segment that is an option is refused (newMalformedSignatureError).
        var unsigned = ServerHarness.configuration()
        unsigned.signingKeys = []
        unsigned.allowsUnsigned = true
        try await ServerHarness.inProcess(unsigned) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let source = harness.origin.url("/a.jpg").absoluteString
            #expect(try await harness.get("/w:10/plain/\(source)").status == 403)
            #expect(try await harness.get("/anything/w:10/plain/\(source)").status == 200)
        }
    }
}
