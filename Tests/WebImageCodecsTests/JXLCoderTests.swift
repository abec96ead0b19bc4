import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// JPEG XL through libjxl (issue 17): files from cjxl (scripts/fixtures/make_jxl.py) beside djxl's
/// reading, animations, the orientation applied, a lossless file's profile converted, encoding
/// read back, and damaged copies of every fixture failing cleanly.
@Suite("JPEG XL")
struct JXLCoderTests {
    struct Expectation: Decodable {
        let width: Int
        let height: Int
        let frames: [[UInt8]]
        let durations: [Double]
    }

    static let manifest: [String: Expectation] = Fixture.manifest("jxl")

    /// djxl is the same libjxl: its pixels exactly. The Display P3 file's reference is Pillow's
    /// conversion of the source, as in the colour tests (lcms's 8-bit transforms round apart by 1).
    static func tolerance(_ name: String) -> Int { name == "p3.jxl" ? 1 : 0 }

    @Test(arguments: manifest.keys.sorted())
    func decodesLikeDjxl(name: String) throws {
        let expected = try #require(Self.manifest[name])
        let data = try Fixture.data("jxl/" + name)
        let image = try CodersManager.shared.decode(data)
        #expect(image.sourceFormat == .jpegXL && image.orientation == .up)
        #expect(image.pixelWidth == expected.width && image.pixelHeight == expected.height, "\(name)")
        #expect(image.frames.count == expected.frames.count)
        for (frame, theirs) in zip(image.frames, expected.frames) {
            let difference = CorpusTests.maximumDifference(frame.pixels.bytes, theirs)
            #expect(difference <= Self.tolerance(name), "\(name): max channel difference \(difference)")
        }
        #expect(image.hasAlpha == name.hasPrefix("alpha") || name == "animated.jxl")
        let header = try ImageHeader(data: data)
        #expect(header.format == .jpegXL && header.width == expected.width && header.height == expected.height)
    }

    @Test func animationsHaveDurationsAndDecodeLazily() throws {
        let data = try Fixture.data("jxl/animated.jxl")
        let image = try CodersManager.shared.decode(data)
        #expect(image.frames.map(\.duration) == [.milliseconds(100), .milliseconds(200), .milliseconds(300)])
        let animated = try #require(try CodersManager.shared.animatedImageProvider(for: data))
        #expect(animated.frameCount == 3)
        #expect(try animated.frame(at: 2) == image.frames[2].pixels)
        #expect(try animated.frame(at: 0) == image.frames[0].pixels, "after a rewind")
        #expect(try CodersManager.shared.decode(data, options: DecodeOptions(firstFrameOnly: true)).frames.count == 1)
        #expect(try CodersManager.shared.animatedImageProvider(for: try Fixture.data("jxl/photo.jxl")) == nil)
    }

    @Test("a lossless file's colour profile is converted to sRGB, or kept when asked")
    func colorProfile() throws {
        let data = try Fixture.data("jxl/p3.jxl")
        let kept = try CodersManager.shared.decode(data, options: DecodeOptions(keepsColorProfile: true))
        #expect(kept.colorProfile != nil)
        let converted = try CodersManager.shared.decode(data)
        #expect(converted.colorProfile == nil)
        #expect(CorpusTests.maximumDifference(kept.pixels.bytes, converted.pixels.bytes) > 10, "the conversion is not a no-op")
        #expect(
            try CodersManager.shared.decode(try Fixture.data("jxl/lossless.jxl"), options: DecodeOptions(keepsColorProfile: true))
                .colorProfile == nil, "sRGB needs no profile")
    }

    @Test("lossless encoding reads back exactly: pixels, alpha, frames, durations, repetitions and the profile")
    func losslessRoundTrip() throws {
        for name in ["lossless.jxl", "alpha.jxl", "animated.jxl"] {
            var original = try CodersManager.shared.decode(try Fixture.data("jxl/" + name))
            original.loopCount = 3
            let encoded = try CodersManager.shared.encode(original, as: .jpegXL, options: EncodeOptions(lossless: true, jxlEffort: 3))
            #expect(ImageFormat(sniffing: encoded) == .jpegXL)
            let decoded = try CodersManager.shared.decode(encoded)
            #expect(decoded.frames.map(\.pixels) == original.frames.map(\.pixels), "\(name)")
            #expect(decoded.frames.map(\.duration) == original.frames.map(\.duration) && decoded.hasAlpha == original.hasAlpha)
            #expect(!original.isAnimated || decoded.loopCount == 3)
        }
        var profiled = try CodersManager.shared.decode(try Fixture.data("jxl/lossless.jxl"))
        profiled.colorProfile = try Fixture.data("color/display-p3.icc")
        let encoded = try CodersManager.shared.encode(profiled, as: .jpegXL, options: EncodeOptions(lossless: true))
        let kept = try CodersManager.shared.decode(encoded, options: DecodeOptions(keepsColorProfile: true))
        #expect(kept.colorProfile == profiled.colorProfile && kept.pixels == profiled.pixels)
    }

    @Test("lossy encoding: smaller at lower quality, close to the original at the default")
    func lossyEncoding() throws {
        let original = try CodersManager.shared.decode(try Fixture.data("jxl/alpha.jxl"))
        let fine = try CodersManager.shared.encode(original, as: .jpegXL)
        let coarse = try CodersManager.shared.encode(original, as: .jpegXL, options: EncodeOptions(quality: 0.3))
        #expect(coarse.count < fine.count)
        let decoded = try CodersManager.shared.decode(fine)
        #expect(decoded.hasAlpha && decoded.pixelWidth == original.pixelWidth)
        let differences = zip(decoded.pixels.premultipliedRGBA(), original.pixels.premultipliedRGBA()).map { abs(Int($0) - Int($1)) }
        #expect(differences.reduce(0, +) / differences.count <= 2, "mean difference at distance 1")
    }

    @Test("a colour profile libjxl could not use is refused with a typed error (libjxl aborts the process on it)")
    func unusableProfile() throws {
        // Found by FuzzJXL: a lossless file whose embedded profile lcms reads but cannot link.
        let data = try Fixture.data("jxl/fuzz-unusable-profile.jxl")
        let kept = try CodersManager.shared.decode(data, options: DecodeOptions(keepsColorProfile: true))
        #expect(kept.colorProfile != nil)
        #expect(throws: WebImageError(.encodeFailed)) { try CodersManager.shared.encode(kept, as: .jpegXL) }
        var garbage = kept
        garbage.colorProfile = Data("not a profile".utf8)
        #expect(throws: WebImageError(.encodeFailed)) { try CodersManager.shared.encode(garbage, as: .jpegXL) }
        #expect(try CodersManager.shared.decode(data).warnings.contains { $0.contains("colour profile") })
    }

    @Test("a file over the pixel limit is refused before its pixels are decoded")
    func limits() throws {
        let data = try Fixture.data("jxl/photo.jxl")
        #expect(throws: WebImageError(.tooLarge)) {
            try CodersManager.shared.decode(data, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: 1000)))
        }
    }

    @Test("truncated and garbled copies of every fixture fail with a typed error, never a crash")
    func damagedFiles() throws {
        for name in Self.manifest.keys.sorted() {
            let data = try Fixture.data("jxl/" + name)
            let prefixes = stride(from: 0, to: data.count, by: max(1, data.count / 40)).underestimatedCount
            #expect(DamagedCopies.decode(data, cuts: 40, garbles: 40, bytes: 8) == prefixes, "\(name): every prefix fails")
        }
    }
}
