import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// Hostile input without a fuzzer: each fixture mutated in fixed pseudo-random ways (flipped
/// bytes, cut tails, spliced garbage) must decode or fail with a `WebImageError`, never crash,
/// through the whole-image, progressive and animated coders alike.
@Suite("Mutated images")
struct MutationTests {
    @Test(
        "600 mutations of each fixture decode or fail with a typed error",
        arguments: [
            "gradient.jpg", "gradient-progressive.jpg", "oriented-right.jpg", "gradient-rgba.png", "gradient-interlaced.png",
            "animated.gif", "fast-once.gif", "gradient-lossy.webp", "gradient-lossless.webp", "animated-lossless.webp",
            "animated.png", "cmyk.jpg",
        ])
    func mutations(name: String) async throws {
        let original = [UInt8](try Fixture.data(name))
        let decoded = try await offCooperativePool { Self.decodeMutations(of: original) }
        #expect(decoded < 600, "some mutations must break \(name)")
    }

    /// Decodes 600 mutations of `original` every way; returns how many decoded whole.
    private static func decodeMutations(of original: [UInt8]) -> Int {
        var generator = SplitMix64(seed: UInt64(original.count))
        let manager = CodersManager()
        var decoded = 0
        for round in 0..<600 {
            var bytes = original
            switch round % 3 {
            case 0:
                for _ in 0..<(1 + Int(generator.next() % 8)) {
                    bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
                }
            case 1:
                bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count))))
            default:
                let at = Int(generator.next() % UInt64(bytes.count))
                bytes.insert(contentsOf: (0..<Int(generator.next() % 64)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }, at: at)
            }
            let limits = DecodeOptions(limits: DecodeLimits(maximumPixelCount: 4_000_000))
            do {
                _ = try manager.decode(Data(bytes), options: limits)
                decoded += 1
            } catch {
                _ = error.code
            }
            _ = try? ImageHeader(data: bytes)
            if let progressive = manager.incrementalDecoder(for: Data(bytes)) {
                // In three pieces, so the codec's state carries from one to the next.
                for end in [bytes.count / 3, bytes.count * 2 / 3, bytes.count] { _ = progressive.update(Data(bytes.prefix(end))) }
            }
            if let animated = try? manager.animatedImageProvider(for: Data(bytes), options: limits) {
                _ = try? animated.frame(at: animated.frameCount - 1)
            }
        }
        return decoded
    }
}
