import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

@Suite("APNG")
struct APNGTests {
    /// Pillow's APNG (offsets, every dispose and blend operation) composes to the frames Pillow
    /// shows; for the last frame, after a "previous" disposal that Pillow's reader does not
    /// apply, to the frame as drawn (what the APNG spec's restore gives).
    @Test func decodesLikePillow() throws {
        let image = try CodersManager.shared.decode(try Fixture.data("animated.png"))
        let expected = try PillowFrames.load("animated-png-frames.json")
        let drawn = try PillowFrames.load("animated-png-drawn.json")
        #expect(image.frames.count == 4 && image.loopCount == 2 && image.sourceFormat == .png)
        for index in 0..<3 {
            #expect(image.frames[index].pixels == expected.pixels(index), "frame \(index)")
        }
        #expect(image.frames[3].pixels == drawn.pixels(3), "frame 3")
        #expect(image.frames[3].pixels != expected.pixels(3), "Pillow's reader differs here")
        #expect(
            image.frames.map(\.duration) == [.milliseconds(100), .milliseconds(50), .milliseconds(100), .milliseconds(200)],
            "a zero delay shows for 100 ms")
        let first = try CodersManager.shared.decode(try Fixture.data("animated.png"), options: DecodeOptions(firstFrameOnly: true))
        #expect(first.frames.count == 1 && first.pixels == expected.pixels(0))
    }

    static func frame(_ index: Int, opaque: Bool) -> ImageFrame {
        var straight: [UInt8] = []
        for pixel in 0..<20 {
            let alpha: UInt8 = opaque || pixel % 3 != 0 ? 255 : 128
            straight += [UInt8(pixel * 12), UInt8(index * 80), 7, alpha]
        }
        return ImageFrame(pixels: PixelBuffer(width: 5, height: 4, straightRGBA: straight), duration: .milliseconds(40 * (index + 1)))
    }

    @Test(arguments: [false, true])
    func animationsRoundTrip(opaque: Bool) throws {
        let frames: [ImageFrame] = (0..<3).map { Self.frame($0, opaque: opaque) }
        let image = Image(frames: frames, loopCount: 5, hasAlpha: !opaque)
        let data = try CodersManager.shared.encode(image, as: .png)
        #expect(ImageFormat(sniffing: data) == .png)
        let back = try CodersManager.shared.decode(data)
        #expect(back.frames.count == 3 && back.loopCount == 5)
        let pixels: [PixelBuffer] = back.frames.map { $0.pixels }
        #expect(pixels == frames.map { $0.pixels })
        let durations: [Duration] = back.frames.map { $0.duration }
        #expect(durations == [.milliseconds(40), .milliseconds(80), .milliseconds(120)])
    }

    @Test func stillPNGsStayStill() throws {
        let still = try CodersManager.shared.decode(try Fixture.data("gradient-rgba.png"))
        #expect(still.frames.count == 1)
    }

    @Test func framesBeyondTheLimitsOrTheCanvasAreTypedErrors() throws {
        let data = try Fixture.data("animated.png")
        // Four frames over a three-frame budget: the first three are kept (issue 36); a budget
        // under one frame is refused.
        #expect(
            try CodersManager.shared.decode(data, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: 32 * 24 * 3))).frames.count
                == 3)
        #expect(throws: WebImageError(.tooLarge)) {
            try CodersManager.shared.decode(data, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: 32 * 24 - 1)))
        }
        // Every truncation decodes or fails with a typed error; none crashes.
        for length in stride(from: 8, to: data.count, by: 7) {
            do { _ = try CodersManager.shared.decode(data.prefix(length)) } catch { #expect(error.code != .cancelled) }
        }
    }
}
