import Foundation
import Testing
import WebImage

@Suite("Animated and progressive coders")
struct AnimatedAndProgressiveCoderTests {
    @Test(arguments: ["animated.gif", "animated.png", "animated-lossless.webp"])
    func lazyFramesMatchTheFullDecode(name: String) throws {
        let data = try Fixture.data(name)
        let full = try CodersManager.shared.decode(data)
        let coder = try #require(try CodersManager.shared.animatedCoder(for: data, maximumBufferedFrames: 2))
        #expect(coder.frameCount == full.frames.count && coder.loopCount == full.loopCount)
        for index in 0..<coder.frameCount { #expect(coder.duration(at: index) == full.frames[index].duration) }
        // Forwards, backwards (a replay from the start) and repeats.
        for index in [2, 0, 1, 2, 2, 1, 0] {
            #expect(try coder.frame(at: index) == full.frames[index].pixels, "\(name) frame \(index)")
        }
        let decoder = try #require(coder as? AnimatedImageDecoder)
        #expect(decoder.bufferedFrameCount <= 2)
        #expect(throws: WebImageError(.decodeFailed)) { try coder.frame(at: coder.frameCount) }
    }

    @Test func stillsHaveNoAnimatedCoder() throws {
        for name in ["gradient-rgba.png", "gradient.jpg", "gradient-lossy.webp"] {
            #expect(try CodersManager.shared.animatedCoder(for: try Fixture.data(name)) == nil)
        }
    }

    /// Feeds a download 300 bytes at a time, as the manager does.
    private func partialImages(_ name: String) throws -> [Image] {
        let data = try Fixture.data(name)
        let coder = try #require(CodersManager.shared.progressiveCoder(for: data.prefix(64)))
        return stride(from: 300, through: data.count + 299, by: 300).compactMap { coder.update(data.prefix(min($0, data.count))) }
    }

    @Test func progressiveJPEGShowsOneImagePerCompleteScan() throws {
        let data = try Fixture.data("large-progressive.jpg")
        let scans = data.withUnsafeBytes { bytes in stride(from: 0, to: bytes.count - 1, by: 1).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA }.count }
        let images = try partialImages("large-progressive.jpg")
        #expect(images.count >= 3 && images.count <= scans, "\(images.count) images for \(scans) scans")
        #expect(images.allSatisfy { $0.pixelWidth == 320 && $0.pixelHeight == 240 })
        #expect(images.last?.pixels == (try CodersManager.shared.decode(data)).pixels, "the last one is the whole image")
    }

    @Test func webPShowsRowsAsTheyArrive() throws {
        let images = try partialImages("gradient-lossy.webp")
        #expect(!images.isEmpty)
        #expect(images.allSatisfy { $0.pixelWidth == 64 && $0.pixelHeight == 48 })
        #expect(CodersManager.shared.progressiveCoder(for: try Fixture.data("animated.gif")) == nil, "GIF has no progressive decoder")
    }
}

@Suite("Progressive PNG")
struct ProgressivePNGTests {
    @Test func rowsArriveInOrder() throws {
        // An uncompressed-ish PNG large enough to arrive in several pieces.
        var straight: [UInt8] = []
        for y in 0..<64 { for x in 0..<64 { straight += [UInt8(x * 4), UInt8(y * 4), UInt8((x ^ y) & 0xFF), 255] } }
        let data = try CodersManager.shared.encode(Image(pixels: PixelBuffer(width: 64, height: 64, straightRGBA: straight)), as: .png)
        let coder = try #require(CodersManager.shared.progressiveCoder(for: data.prefix(64)))
        var images: [Image] = []
        for end in stride(from: 200, through: data.count, by: max(1, data.count / 6)) {
            if let image = coder.update(data.prefix(end)) { images.append(image) }
        }
        if let last = coder.update(data) { images.append(last) }
        #expect(images.count >= 2, "\(images.count) partial images from \(data.count) bytes")
        let full = try CodersManager.shared.decode(data)
        #expect(images.last?.pixels == full.pixels)
        // A partial image's top rows are already right; the missing ones are transparent.
        let first = try #require(images.first)
        #expect(first.pixels.pixel(x: 5, y: 0) == full.pixels.pixel(x: 5, y: 0))
        #expect(first.pixels.pixel(x: 5, y: 63).alpha == 0)
    }

    @Test func interlacedImagesShowByPass() throws {
        let data = try Fixture.data("gradient-interlaced.png")
        let coder = try #require(CodersManager.shared.progressiveCoder(for: data))
        let shown = stride(from: 100, through: data.count, by: 40).compactMap { coder.update(data.prefix($0)) }
        #expect(!shown.isEmpty)
        #expect(shown.allSatisfy { $0.pixelWidth == 64 && $0.pixelHeight == 48 })
    }
}
