import Foundation
import Testing
import WebImage

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
        #expect(throws: WebImageError(.tooLarge), "three frames exceed a two-frame budget") { try GIFCoder().decode(data, options: tight) }
        #expect(try GIFCoder().decode(data, options: DecodeOptions(limits: tight.limits, firstFrameOnly: true)).frames.count == 1)
        for length in [10, 100, data.count / 2, data.count - 2] {
            #expect(throws: WebImageError(.decodeFailed), "cut to \(length)") { try GIFCoder().decode(data.prefix(length), options: DecodeOptions()) }
        }
        #expect(try CodersManager().decode(data).frames.count == 3)
    }
}
