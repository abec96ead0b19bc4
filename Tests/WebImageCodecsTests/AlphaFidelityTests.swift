import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// Straight alpha kept from decode to a lossless encode (issue 16): translucent 8-bit sources
/// from scripts/fixtures/make_alpha.py, many of their pixels at low alpha, where 8-bit
/// premultiplied storage changed colours by up to 23 levels.
@Suite("Alpha fidelity")
struct AlphaFidelityTests {
    struct Expectation: Decodable {
        let width: Int
        let height: Int
        let frames: [[UInt8]]
    }

    static let manifest: [String: Expectation] = {
        (try? JSONDecoder().decode([String: Expectation].self, from: Fixture.data("alpha/expected.json"))) ?? [:]
    }()

    static let sources = [
        "translucent-rgba.png", "translucent-grey-alpha.png", "translucent-palette.png", "translucent.apng",
        "translucent-lossless.webp", "translucent-animated.webp",
    ]

    static func lossless(for name: String) -> (ImageFormat, EncodeOptions) {
        name.hasSuffix(".webp") ? (.webP, EncodeOptions(lossless: true)) : (.png, EncodeOptions())
    }

    @Test(arguments: sources)
    func decodesToPillowsValuesExactly(name: String) throws {
        let expected = try #require(Self.manifest[name])
        let image = try CodersManager.shared.decode(try Fixture.data("alpha/" + name))
        #expect(image.frames.count == expected.frames.count)
        #expect(image.hasAlpha)
        for (frame, straight) in zip(image.frames, expected.frames) {
            #expect(frame.pixels.width == expected.width && frame.pixels.height == expected.height)
            #expect(frame.pixels.bytes == straight, "\(name): a value differs from Pillow's")
        }
        let lowAlpha = image.pixels.bytes.enumerated().filter { $0.offset % 4 == 3 && (1..<32).contains($0.element) }.count
        #expect(lowAlpha * 8 > image.pixelWidth * image.pixelHeight, "\(name): the fixture has few low-alpha pixels")
    }

    @Test(arguments: sources)
    func losslessReencodeIsBitExact(name: String) throws {
        let original = try CodersManager.shared.decode(try Fixture.data("alpha/" + name))
        let (format, options) = Self.lossless(for: name)
        let encoded = try CodersManager.shared.encode(original, as: format, options: options)
        let decoded = try CodersManager.shared.decode(encoded)
        #expect(decoded.frames.count == original.frames.count)
        for (index, (ours, theirs)) in zip(decoded.frames, original.frames).enumerated() {
            #expect(ours.pixels == theirs.pixels, "\(name) frame \(index) changed in a \(format) round trip")
            #expect(ours.duration == theirs.duration)
        }
    }

    @Test("webimage convert a.png b.png and --lossless WebP keep every value")
    func convertCommandRoundTrips() async throws {
        let workspace = try CommandWorkspace()
        for (name, output, extra) in [
            ("translucent-rgba.png", "out.png", [String]()), ("translucent.apng", "out-animated.png", []),
            ("translucent-animated.webp", "out.webp", ["--lossless"]),
        ] {
            let run = try await workspace.run(["convert", Fixture.url("alpha/" + name).path, workspace.path(output)] + extra)
            #expect(run.status == 0, "\(run.standardError)")
            let converted = try CodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: workspace.path(output))))
            let original = try CodersManager.shared.decode(try Fixture.data("alpha/" + name))
            #expect(converted.frames.first?.pixels == original.pixels, "\(name) → \(output)")
        }
    }
}
