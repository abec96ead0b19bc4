import Foundation
import Testing
import WebImage
import WebImageTesting
@testable import WebImageServer
import WebImageTestSupport

/// imgproxy's client-feature tests as ours: `clientfeatures/detector_test.go` at v4
/// (eef3b312), `ClientFeaturesDetectorSuite`. Its features are what the answer shows here: the
/// format a request gets (`TestFeaturesAutoFormats`), the options client hints set
/// (`TestFeaturesClientHintsDPR`, `...Width`), and `Vary` (`TestSetVary`). One difference, on
/// purpose: `Accept` is read with its q-values (RFC 9110), so `image/webp;q=0` refuses WebP where
/// imgproxy's substring match would send it (`HardeningTests` covers it); and `Accept` is left out
/// of `Vary` when the URL names its format and nothing is enforced, since the answer cannot vary
/// with it then.
@Suite("imgproxy's tables: client features (clientfeatures/detector_test.go)", .serialized)
struct ImgproxyClientFeatureTableTests {
    enum Switch: String, Sendable, CaseIterable { case autoWebP, enforceWebP, autoAVIF, enforceAVIF, autoJXL, enforceJXL }

    static func configuration(_ switches: [Switch], clientHints: Bool = false) -> ImageServerConfiguration {
        var configuration = ServerHarness.configuration()
        for flag in switches {
            switch flag {
            case .autoWebP: configuration.autoWebP = true
            case .enforceWebP: configuration.enforceWebP = true
            case .autoAVIF: configuration.autoAVIF = true
            case .enforceAVIF: configuration.enforceAVIF = true
            case .autoJXL: configuration.autoJXL = true
            case .enforceJXL: configuration.enforceJXL = true
            }
        }
        configuration.enableClientHints = clientHints
        return configuration
    }

    static let without = "image/apng,image/*,*/*;q=0.8"

    @Test(
        "TestFeaturesAutoFormats: each switch, with and without its type in Accept",
        arguments: [
            ("AutoWebP_ConainsWebP", [Switch.autoWebP], "image/webp,image/apng,image/*,*/*;q=0.8", ImageFormat.webP),
            ("AutoWebP_DoesNotContainWebP", [.autoWebP], without, .jpeg),
            ("EnforceWebP_ContainsWebP", [.enforceWebP], "image/webp,image/apng,image/*,*/*;q=0.8", .webP),
            ("EnforceWebP_DoesNotContainWebP", [.enforceWebP], without, .jpeg),
            ("AutoAvif_ContainsAvif", [.autoAVIF], "image/avif,image/apng,image/*,*/*;q=0.8", .avif),
            ("AutoAvif_DoesNotContainAvif", [.autoAVIF], without, .jpeg),
            ("EnforceAvif_ContainsAvif", [.enforceAVIF], "image/avif,image/apng,image/*,*/*;q=0.8", .avif),
            ("EnforceAvif_DoesNotContainAvif", [.enforceAVIF], without, .jpeg),
            ("AutoJXL_ContainsJXL", [.autoJXL], "image/jxl,image/apng,image/*,*/*;q=0.8", .jpegXL),
            ("AutoJXL_DoesNotContainJXL", [.autoJXL], without, .jpeg),
            ("EnforceJXL_ContainsJXL", [.enforceJXL], "image/jxl,image/apng,image/*,*/*;q=0.8", .jpegXL),
            ("EnforceJXL_DoesNotContainJXL", [.enforceJXL], without, .jpeg),
            ("NoneEnabled_ContainsAll", [], "image/webp,image/avif,image/jxl,image/apng,image/*,*/*;q=0.8", .jpeg),
        ] as [(String, [Switch], String, ImageFormat)])
    func autoFormats(_ name: String, _ switches: [Switch], _ accept: String, _ expected: ImageFormat) async throws {
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))
        try await ServerHarness.inProcess(Self.configuration(switches)) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let answer = try await harness.get(harness.signedPlain("w:10", "/a.jpg"), headers: [("Accept", accept)])
            #expect(answer.header("Content-Type") == expected.mimeType, "\(name)")
        }
    }

    @Test(
        "TestFeaturesClientHintsDPR and ...Width: the hints read, in order, within their bounds",
        arguments: [
            ("ValidDPR", [("DPR", "1.5")], 1.5, nil), ("ValidSecChDPR", [("Sec-CH-DPR", "2.0")], 2.0, nil),
            ("ValidDprAndSecChDPR", [("DPR", "3.0"), ("Sec-CH-DPR", "2.5")], 2.5, nil),
            ("InvalidDPR_Negative", [("DPR", "-1.0")], nil, nil),
            ("InvalidDPR_TooHigh", [("DPR", "10.0")], nil, nil), ("InvalidDPR_NonNumeric", [("DPR", "abc")], nil, nil),
            ("ValidWidth", [("Width", "800")], nil, 800), ("ValidSecChWidth", [("Sec-CH-Width", "1024")], nil, 1024),
            ("ValidWidthAndSecChWidth", [("Width", "1280"), ("Sec-CH-Width", "1440")], nil, 1440),
            ("InvalidWidth_Negative", [("Width", "-800")], nil, nil), ("InvalidWidth_NonNumeric", [("Width", "abc")], nil, nil),
        ] as [(String, [(String, String)], Double?, Int?)])
    func clientHints(_ name: String, _ headers: [(String, String)], _ dpr: Double?, _ width: Int?) {
        func header(_ name: String) -> String? { headers.first { $0.0 == name }?.1 }
        let hints = OptionsParser.ClientHints(
            dpr: [header("Sec-CH-DPR"), header("DPR")], width: [header("Sec-CH-Width"), header("Width")])
        #expect(hints.dpr == dpr && hints.width == width, "\(name)")
    }

    @Test("ClientHintsDisabled (both): the hints are not read, and the result is the URL's size")
    func hintsDisabled() async throws {
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))
        try await ServerHarness.inProcess(Self.configuration([])) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let answer = try await harness.get(
                harness.signedPlain("w:20", "/a.jpg"), headers: [("DPR", "2.0"), ("Sec-CH-DPR", "3.0"), ("Width", "800")])
            #expect(try CodersManager.shared.decode(answer.body).pixelWidth == 20)
            #expect(answer.header("Vary") == nil)
        }
    }

    @Test(
        "TestSetVary: each switch's Vary",
        arguments: [
            ("AutoWebP_Enabled", [Switch.autoWebP], false, "Accept"), ("EnforceWebP_Enabled", [.enforceWebP], false, "Accept"),
            ("AutoAvif_Enabled", [.autoAVIF], false, "Accept"), ("EnforceAvif_Enabled", [.enforceAVIF], false, "Accept"),
            ("AutoJXL_Enabled", [.autoJXL], false, "Accept"), ("EnforceJXL_Enabled", [.enforceJXL], false, "Accept"),
            ("EnableClientHints_Enabled", [], true, "Sec-Ch-Dpr, Dpr, Sec-Ch-Width, Width"),
            ("Combined", [.autoWebP], true, "Accept, Sec-Ch-Dpr, Dpr, Sec-Ch-Width, Width"),
        ] as [(String, [Switch], Bool, String)])
    func vary(_ name: String, _ switches: [Switch], _ clientHints: Bool, _ expected: String) async throws {
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))
        try await ServerHarness.inProcess(Self.configuration(switches, clientHints: clientHints)) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            #expect(try await harness.get(harness.signedPlain("w:10", "/a.jpg")).header("Vary") == expected, "\(name)")
        }
    }
}
