import Foundation
import Testing
import WebImageCodecs
import WebImageTesting
import WebImageTestSupport

@Suite("GIF coder")
struct GIFCoderTests {
    @Test("every frame matches Pillow's decode exactly, with its delay and the loop count")
    func animated() throws {
        let expected = try PillowFrames.load("animated-gif-frames.json")
        let image = try GIFCoder().decode(try Fixture.data("animated.gif"), options: DecodeOptions())
        #expect(image.isAnimated && image.frames.count == expected.frames.count)
        #expect(image.pixelWidth == expected.width && image.pixelHeight == expected.height)
        #expect(image.loopCount == expected.loop)
        #expect(image.sourceFormat == .gif)
        for (frame, pillow) in zip(image.frames, expected.frames) {
            #expect(frame.duration == .milliseconds(pillow.duration ?? -1))
            #expect(frame.pixels == PixelBuffer(width: expected.width, height: expected.height, straightRGBA: pillow.rgba))
        }
    }

    @Test("zero delays become 0.1 s and a file without NETSCAPE2.0 plays once")
    func delaysAndLoop() throws {
        let image = try GIFCoder().decode(try Fixture.data("fast-once.gif"), options: DecodeOptions())
        #expect(image.frames.count == 3)
        #expect(image.frames.allSatisfy { $0.duration == .milliseconds(100) })
        #expect(image.loopCount == 1)
    }

    @Test("first frame only, limits, truncation, and the coders manager")
    func options() throws {
        let data = try Fixture.data("animated.gif")
        #expect(try GIFCoder().decode(data, options: DecodeOptions(firstFrameOnly: true)).frames.count == 1)
        let tight = DecodeOptions(limits: DecodeLimits(maximumPixelCount: 32 * 24 * 2))
        #expect(try GIFCoder().decode(data, options: tight).frames.count == 2, "a two-frame budget keeps the first two of three frames")
        #expect(try GIFCoder().decode(data, options: DecodeOptions(limits: tight.limits, firstFrameOnly: true)).frames.count == 1)
        // Cut inside the header, the first frame, the second frame's colour table, the last
        // frame's data: truncation.
        for length in [10, 100, data.count / 2, data.count - 10] {
            #expect(throws: WebImageError(.decodeFailed), "cut to \(length)") {
                try GIFCoder().decode(data.prefix(length), options: DecodeOptions())
            }
        }
        // Without the last frame's block terminator and the trailer: every frame is there.
        let unterminated = try GIFCoder().decode(data.prefix(data.count - 2), options: DecodeOptions())
        #expect(unterminated.frames.count == 3 && !unterminated.isPartial && !unterminated.warnings.isEmpty)
        // Accepted when cut inside the last frame: the frames before it, and the rows that arrived.
        let cut = try GIFCoder().decode(data.prefix(data.count - 10), options: DecodeOptions(acceptsTruncatedImages: true))
        #expect(cut.frames.count == 3 && cut.isPartial)
        #expect(try CodersManager().decode(data).frames.count == 3)
    }

    @Test("only a NETSCAPE2.0 or ANIMEXTS1.0 extension sets the loop count, not another application's data")
    func loopCountNeedsItsExtension() throws {
        let still = Image(pixels: PixelBuffer(width: 4, height: 4, straightRGBA: [UInt8](repeating: 200, count: 64)))
        let gif = [UInt8](try GIFCoder().encode(still, as: .gif, options: EncodeOptions()))
        let table = gif[10] & 0x80 != 0 ? 3 * (1 << (Int(gif[10] & 7) + 1)) : 0
        let start = 13 + table
        func with(_ application: String) -> Data {
            let block: [UInt8] = [0x21, 0xFF, 11] + Array(application.utf8) + [3, 1, 5, 0, 0]
            return Data(gif[..<start] + block + gif[start...])
        }
        #expect(try GIFCoder().decode(with("XMP DataXMP"), options: DecodeOptions()).loopCount == 1)
        #expect(try GIFCoder().decode(with("NETSCAPE2.0"), options: DecodeOptions()).loopCount == 5)
    }

    /// giflib allocates each frame at the size its descriptor declares, however small the canvas.
    @Test("frames are checked as declared before their pixels are read: one frame over the limit, or all over four times it")
    func declaredFrameSizes() throws {
        let frames = (0..<5).map { index in
            ImageFrame(
                pixels: PixelBuffer(width: 10, height: 10, straightRGBA: [UInt8](repeating: UInt8(index * 40), count: 400)),
                duration: .milliseconds(100))
        }
        let gif = try GIFCoder().encode(Image(frames: frames, hasAlpha: true), as: .gif, options: EncodeOptions())
        let lazy = CodersManager(coders: [GIFCoder()])
        // Five 10x10 frames: 500 declared pixels, within four times 125 but not four times 124.
        #expect(
            try lazy.animatedImageProvider(for: gif, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: 125)))?.frameCount == 5)
        #expect(throws: WebImageError(.tooLarge)) {
            try lazy.animatedImageProvider(for: gif, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: 124)))
        }
        // The first frame's descriptor declares 3000x3000 on the 10x10 canvas.
        var huge = gif
        let descriptor = try #require(huge.firstRange(of: Data([0x2C, 0, 0, 0, 0, 10, 0, 10, 0])))
        huge.replaceSubrange(descriptor.lowerBound + 5..<descriptor.lowerBound + 9, with: [0xB8, 0x0B, 0xB8, 0x0B])
        let limits = DecodeOptions(limits: DecodeLimits(maximumPixelCount: 1_000_000))
        #expect(throws: WebImageError(.tooLarge)) { try GIFCoder().decode(huge, options: limits) }
        #expect(throws: WebImageError(.tooLarge)) { try lazy.animatedImageProvider(for: huge, options: limits) }
    }

    @Test("an animation encodes and decodes back with its frames, delays and loop count, colours close")
    func encodeAnimation() throws {
        let source = try GIFCoder().decode(try Fixture.data("animated.gif"), options: DecodeOptions())
        let encoded = try GIFCoder().encode(source, as: .gif, options: EncodeOptions())
        #expect(ImageFormat(sniffing: encoded) == .gif)
        let back = try GIFCoder().decode(encoded, options: DecodeOptions())
        #expect(back.frames.count == 3 && back.loopCount == source.loopCount)
        #expect(back.frames.map(\.duration) == source.frames.map(\.duration))
        for index in 0..<3 {
            let difference =
                zip(back.frames[index].pixels.bytes, source.frames[index].pixels.bytes).map { abs(Int($0) - Int($1)) }.max() ?? 99
            #expect(difference <= 16, "frame \(index): giflib's quantiser keeps 5 bits per channel")
        }
    }

    @Test("a still image with transparent pixels keeps them transparent")
    func encodeTransparency() throws {
        var rgba: [UInt8] = []
        for index in 0..<64 { rgba += index % 2 == 0 ? [200, 30, 30, 255] : [0, 0, 0, 0] }
        let still = Image(pixels: PixelBuffer(width: 8, height: 8, straightRGBA: rgba))
        let back = try GIFCoder().decode(try CodersManager().encode(still, as: .gif), options: DecodeOptions())
        #expect(!back.isAnimated && back.loopCount == 1)
        #expect(back.pixels.pixel(x: 1, y: 0).alpha == 0)
        let red = back.pixels.pixel(x: 0, y: 0)
        #expect(red.alpha == 255 && abs(Int(red.red) - 200) <= 8 && abs(Int(red.green) - 30) <= 8)
    }

    @Test(
        "encoding frees every frame: a hundred 3-frame encodes leave the resident set where it was",
        .disabled(if: Sanitizer.isActive, "AddressSanitizer's quarantine keeps freed memory resident; LeakSanitizer checks this leak there")
    )
    func encodeDoesNotLeak() async {
        // Each encode of this animation used to leave giflib's saved images behind: 3 x 160 x 160
        // bytes of raster plus colour maps, about 8 MB over the loop, all of it touched and so
        // resident. Freed buffers are reused by the next encode, so without a leak the resident set
        // stays put. In a child process of its own (an exit test), so that tests running beside it
        // do not move the figure.
        await #expect(processExitsWith: .success) {
            let side = 160
            let frames = (0..<3).map { shade in
                var rgba: [UInt8] = []
                rgba.reserveCapacity(side * side * 4)
                for index in 0..<side * side { rgba += [UInt8(index % 251), UInt8(shade * 80), UInt8(index / side), 255] }
                return ImageFrame(pixels: PixelBuffer(width: side, height: side, straightRGBA: rgba), duration: .milliseconds(100))
            }
            let animation = Image(frames: frames, loopCount: 0, hasAlpha: false)
            _ = try? GIFCoder().encode(animation, as: .gif, options: EncodeOptions())
            let before = ResidentMemory.current() ?? 0
            for _ in 0..<100 { _ = try? GIFCoder().encode(animation, as: .gif, options: EncodeOptions()) }
            let growth = (ResidentMemory.current() ?? Int.max) - before
            if growth >= 3_000_000 {
                print("resident set grew by \(growth) bytes over 100 encodes")
                exit(1)
            }
        }
    }
}
