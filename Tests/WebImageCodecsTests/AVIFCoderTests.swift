import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// AVIF through libavif (issue 17): files from avifenc and Pillow (scripts/fixtures/make_avif.py)
/// beside Pillow's reading, the irot and imir transforms applied, encoding read back, and damaged
/// copies of every fixture failing cleanly.
@Suite("AVIF")
struct AVIFCoderTests {
    struct Expectation: Decodable {
        let width: Int
        let height: Int
        let frames: [[UInt8]]
    }

    static let manifest: [String: Expectation] = Fixture.manifest("avif")

    /// Pillow's wheel bundles its own libavif and YUV conversion: a few levels apart.
    static let tolerance = 3

    @Test(arguments: manifest.keys.sorted())
    func decodesLikePillow(name: String) throws {
        let expected = try #require(Self.manifest[name])
        let data = try Fixture.data("avif/" + name)
        let image = try CodersManager.shared.decode(data)
        #expect(image.sourceFormat == .avif && image.orientation == .up)
        #expect(image.pixelWidth == expected.width && image.pixelHeight == expected.height, "\(name)")
        #expect(image.frames.count == expected.frames.count)
        for (frame, theirs) in zip(image.frames, expected.frames) {
            let difference = CorpusTests.maximumDifference(frame.pixels.bytes, theirs)
            #expect(difference <= Self.tolerance, "\(name): max channel difference \(difference)")
        }
        let header = try ImageHeader(data: data)
        #expect(header.format == .avif && header.width == expected.width && header.height == expected.height)
    }

    @Test func animationsHaveDurationsAndDecodeLazily() throws {
        let data = try Fixture.data("avif/animated.avif")
        let image = try CodersManager.shared.decode(data)
        #expect(image.frames.map(\.duration) == [.milliseconds(100), .milliseconds(200), .milliseconds(300)])
        let animated = try #require(try CodersManager.shared.animatedImageProvider(for: data))
        #expect(animated.frameCount == 3 && animated.loopCount == 0)
        #expect(try animated.frame(at: 2) == image.frames[2].pixels)
        #expect(try animated.frame(at: 0) == image.frames[0].pixels)
        #expect(try CodersManager.shared.decode(data, options: DecodeOptions(firstFrameOnly: true)).frames.count == 1)
        #expect(try CodersManager.shared.animatedImageProvider(for: try Fixture.data("avif/8-bit.avif")) == nil)
    }

    @Test("encoding keeps size, alpha, colour within the quantizer's error, frames and durations, and the profile")
    func encodesAndReadsBack() throws {
        for name in ["8-bit.avif", "alpha.avif", "animated.avif"] {
            let original = try CodersManager.shared.decode(try Fixture.data("avif/" + name))
            let encoded = try CodersManager.shared.encode(original, as: .avif, options: EncodeOptions(quality: 1, avifSpeed: 9))
            #expect(ImageFormat(sniffing: encoded) == .avif)
            let decoded = try CodersManager.shared.decode(encoded)
            #expect(decoded.frames.count == original.frames.count && decoded.hasAlpha == original.hasAlpha, "\(name)")
            #expect(decoded.frames.map(\.duration) == original.frames.map(\.duration))
            for (ours, theirs) in zip(decoded.frames, original.frames) {
                // 4:2:0 chroma at quantizer 0: edges of saturated colour move most; the average barely.
                let differences = zip(ours.pixels.bytes, theirs.pixels.bytes).map { abs(Int($0) - Int($1)) }
                #expect(differences.reduce(0, +) / differences.count <= 2, "\(name): mean difference")
            }
        }
        var profiled = try CodersManager.shared.decode(try Fixture.data("avif/8-bit.avif"))
        profiled.colorProfile = try Fixture.data("color/display-p3.icc")
        let encoded = try CodersManager.shared.encode(profiled, as: .avif)
        #expect(
            try CodersManager.shared.decode(encoded, options: DecodeOptions(keepsColorProfile: true)).colorProfile == profiled.colorProfile)
        #expect(try CodersManager.shared.decode(encoded).colorProfile == nil, "converted to sRGB by default")
        // An animation's frames from the lazy coder are converted as a whole decode's are.
        var animation = try CodersManager.shared.decode(try Fixture.data("avif/animated.avif"))
        animation.colorProfile = profiled.colorProfile
        let sequence = try CodersManager.shared.encode(animation, as: .avif, options: EncodeOptions(avifSpeed: 9))
        let whole = try CodersManager.shared.decode(sequence)
        let lazy = try #require(try CodersManager.shared.animatedImageProvider(for: sequence))
        #expect(try lazy.frame(at: 1) == whole.frames[1].pixels)
        let kept = try CodersManager.shared.decode(sequence, options: DecodeOptions(keepsColorProfile: true))
        #expect(kept.frames[1].pixels != whole.frames[1].pixels, "the conversion changed the frames")
    }

    @Test("a file over the pixel limit is refused before its pixels are decoded")
    func limits() throws {
        let data = try Fixture.data("avif/8-bit.avif")
        #expect(throws: WebImageError(.tooLarge)) {
            try CodersManager.shared.decode(data, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: 1000)))
        }
    }

    @Test("truncated and garbled copies of every fixture fail with a typed error, never a crash")
    func damagedFiles() throws {
        for name in Self.manifest.keys.sorted() {
            let data = try Fixture.data("avif/" + name)
            let prefixes = stride(from: 0, to: data.count, by: max(1, data.count / 40)).underestimatedCount
            #expect(DamagedCopies.decode(data, cuts: 40, garbles: 40, bytes: 8) == prefixes, "\(name): every prefix fails")
        }
    }
}
