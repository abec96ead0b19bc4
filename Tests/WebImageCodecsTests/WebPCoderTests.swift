import Foundation
import Testing
import WebImageTesting
import WebImageCodecs
import WebImageTestSupport

@Suite("WebP coder")
struct WebPCoderTests {
    @Test("lossless WebP matches Pillow's decode exactly, alpha included")
    func lossless() throws {
        let expected = try PillowFrames.load("gradient-lossless-webp.json")
        let image = try WebPCoder().decode(try Fixture.data("gradient-lossless.webp"), options: DecodeOptions())
        #expect(image.hasAlpha && !image.isAnimated && image.sourceFormat == .webP)
        #expect(image.pixels == expected.pixels(0))
    }

    @Test("lossy WebP is within 2 of Pillow's decode on every channel")
    func lossy() throws {
        let expected = try PillowFrames.load("gradient-lossy-webp.json")
        let image = try WebPCoder().decode(try Fixture.data("gradient-lossy.webp"), options: DecodeOptions())
        let difference = zip(image.pixels.bytes, expected.pixels(0).bytes).map { abs(Int($0) - Int($1)) }.max() ?? 99
        #expect(difference <= 2)
    }

    @Test("animated WebP: each composed frame exact, durations by the 0.011 s rule, the loop count")
    func animated() throws {
        let expected = try PillowFrames.load("animated-webp-frames.json")
        let image = try WebPCoder().decode(try Fixture.data("animated-lossless.webp"), options: DecodeOptions())
        #expect(image.frames.count == 3 && image.loopCount == 3)
        #expect(image.frames.map(\.duration) == [.milliseconds(80), .milliseconds(120), .milliseconds(100)], "written as 80, 120 and 5 ms")
        for index in 0..<3 { #expect(image.frames[index].pixels == expected.pixels(index), "frame \(index)") }
        #expect(
            try WebPCoder().decode(try Fixture.data("animated-lossless.webp"), options: DecodeOptions(firstFrameOnly: true)).frames.count
                == 1)
    }

    @Test("thumbnails are scaled in the decoder; limits and truncation are typed errors")
    func optionsAndFailures() throws {
        let data = try Fixture.data("gradient-lossy.webp")
        let thumbnail = try WebPCoder().decode(data, options: DecodeOptions(thumbnail: .init(width: 32, height: 32)))
        #expect((thumbnail.pixelWidth, thumbnail.pixelHeight) == (32, 24), "aspect ratio kept inside 32x32")
        #expect(throws: WebImageError(.tooLarge)) {
            try WebPCoder().decode(data, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: 100)))
        }
        let animated = try Fixture.data("animated-lossless.webp")
        // Over the budget together, an animation keeps the frames that fit (issue 36).
        let kept = try WebPCoder().decode(animated, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: 32 * 24 * 2)))
        #expect(kept.frames.count == 2 && kept.warnings.contains { $0.hasPrefix("kept the first 2 of") })
        for cut in [data.prefix(20), data.prefix(data.count / 2), animated.prefix(animated.count / 2)] {
            #expect(throws: WebImageError(.decodeFailed)) { try WebPCoder().decode(cut, options: DecodeOptions()) }
        }
        #expect(try CodersManager().decode(animated).frames.count == 3)
    }

    /// Found by FuzzWebP: libwebp's animation decoder allocates the canvas as it is created, and
    /// the lazy animated coder checked the limits only after creating it. The child process runs
    /// with its address space capped, so an allocation of the declared canvas fails there instead
    /// of being refused.
    @Test(
        "an animation declaring a 65536x65535 canvas is too large before anything is allocated",
        .disabled(if: Sanitizer.isActive, "a sanitizer's shadow memory needs the address space this test's child caps")
    )
    func hugeCanvas() async throws {
        var data = try Fixture.data("animated-lossless.webp")
        // VP8X: canvas width - 1 and height - 1, 24 bits each, little-endian, at bytes 24 and 27.
        data.replaceSubrange(24..<30, with: [0xFF, 0xFF, 0x00, 0xFE, 0xFF, 0x00])
        let directory = try TemporaryDirectory("huge-canvas")
        let file = directory.url.appendingPathComponent("huge.webp")
        try data.write(to: file)
        let child = try ChildProcess(ChildProcess.builtProduct("WebImageTestChild"), ["decode-memory-limited", file.path])
        let exit = try await child.waitForExit()
        #expect(exit.status == 0 && !exit.signaled)
        #expect(child.lines == ["decode tooLarge", "animated tooLarge"])
    }

    @Test("lossless encoding round-trips; lossy is smaller and close")
    func encodeStill() throws {
        let source = try WebPCoder().decode(try Fixture.data("gradient-lossless.webp"), options: DecodeOptions())
        let lossless = try WebPCoder().encode(source, as: .webP, options: EncodeOptions(lossless: true))
        #expect(ImageFormat(sniffing: lossless) == .webP)
        #expect(try WebPCoder().decode(lossless, options: DecodeOptions()).pixels == source.pixels)
        let lossy = try WebPCoder().encode(source, as: .webP, options: EncodeOptions(quality: 0.8))
        let back = try WebPCoder().decode(lossy, options: DecodeOptions())
        let difference = zip(back.pixels.bytes, source.pixels.bytes).map { abs(Int($0) - Int($1)) }.max() ?? 99
        #expect(difference <= 24)
        #expect(try CodersManager().encode(source, as: .webP).count > 0)
    }

    @Test("an animation encodes with its frames, durations and loop count")
    func encodeAnimation() throws {
        let source = try WebPCoder().decode(try Fixture.data("animated-lossless.webp"), options: DecodeOptions())
        let encoded = try WebPCoder().encode(source, as: .webP, options: EncodeOptions(lossless: true))
        let back = try WebPCoder().decode(encoded, options: DecodeOptions())
        #expect(back.frames.count == 3 && back.loopCount == 3)
        #expect(back.frames.map(\.duration) == source.frames.map(\.duration))
        for index in 0..<3 { #expect(back.frames[index].pixels == source.frames[index].pixels, "frame \(index)") }
    }
}
