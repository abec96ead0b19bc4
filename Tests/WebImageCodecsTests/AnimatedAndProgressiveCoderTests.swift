import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

@Suite("Animated and progressive coders")
struct AnimatedAndProgressiveCoderTests {
    @Test(arguments: ["animated.gif", "animated.png", "animated-lossless.webp"])
    func lazyFramesMatchTheFullDecode(name: String) throws {
        let data = try Fixture.data(name)
        let full = try CodersManager.shared.decode(data)
        let coder = try #require(try CodersManager.shared.animatedImageProvider(for: data, maximumBufferedFrames: 2))
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
            #expect(try CodersManager.shared.animatedImageProvider(for: try Fixture.data(name)) == nil)
        }
    }

    /// Feeds a download 300 bytes at a time, as the manager does.
    private func partialImages(_ name: String) throws -> [Image] {
        let data = try Fixture.data(name)
        let coder = try #require(CodersManager.shared.incrementalDecoder(for: data.prefix(64)))
        return stride(from: 300, through: data.count + 299, by: 300).compactMap { coder.update(data.prefix(min($0, data.count))) }
    }

    @Test func progressiveJPEGShowsOneImagePerCompleteScan() throws {
        let data = try Fixture.data("large-progressive.jpg")
        let scans = data.withUnsafeBytes { bytes in
            stride(from: 0, to: bytes.count - 1, by: 1).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA }.count
        }
        let images = try partialImages("large-progressive.jpg")
        #expect(images.count >= 3 && images.count <= scans, "\(images.count) images for \(scans) scans")
        #expect(images.allSatisfy { $0.pixelWidth == 320 && $0.pixelHeight == 240 })
        #expect(images.last?.pixels == (try CodersManager.shared.decode(data)).pixels, "the last one is the whole image")
    }

    /// Where each scan of a JPEG starts (its SOS marker), and where the end marker is.
    private func scanStarts(_ data: Data) -> [Int] {
        data.withUnsafeBytes { bytes in
            stride(from: 0, to: bytes.count - 1, by: 1).filter { bytes[$0] == 0xFF && (bytes[$0 + 1] == 0xDA || bytes[$0 + 1] == 0xD9) }
        }
    }

    @Test func progressiveJPEGFedByteByByteDrawsEachScanOnce() throws {
        let data = try Fixture.data("large-progressive.jpg")
        let markers = scanStarts(data)
        let coder = try #require(CodersManager.shared.incrementalDecoder(for: data))
        var images: [(end: Int, image: Image)] = []
        for end in 1...data.count {
            if let image = coder.update(data.prefix(end)) { images.append((end, image)) }
        }
        #expect(images.count == markers.count - 1, "one image per scan")
        // Scan k is drawn once it is complete (for an early scan, whose block smoothing looks two
        // block rows ahead, once the next scan has begun), and it is exactly what libjpeg makes
        // of the file cut just before the next scan.
        for (index, shown) in images.enumerated() {
            let nextButOne = index + 2 < markers.count ? markers[index + 2] : data.count
            #expect(shown.end > markers[index] && shown.end <= nextButOne, "scan \(index + 1) drawn at byte \(shown.end)")
            let cut = try CodersManager.shared.decode(data.prefix(markers[index + 1]), options: DecodeOptions(acceptsTruncatedImages: true))
            #expect(TransformerGoldenTests.maximumDifference(shown.image.pixels, cut.pixels) == 0, "scan \(index + 1)")
        }
        #expect(images.last?.image.pixels == (try CodersManager.shared.decode(data)).pixels)
    }

    @Test func baselineJPEGShowsRowsTopDown() throws {
        var straight: [UInt8] = []
        for y in 0..<128 { for x in 0..<96 { straight += [UInt8(x * 2), UInt8(y * 2), UInt8((x * y) & 0xFF), 255] } }
        let data = try CodersManager.shared.encode(Image(pixels: PixelBuffer(width: 96, height: 128, straightRGBA: straight)), as: .jpeg)
        let coder = try #require(CodersManager.shared.incrementalDecoder(for: data))
        let images = stride(from: 64, through: data.count + 63, by: 64).compactMap { coder.update(data.prefix(min($0, data.count))) }
        #expect(images.count >= 3, "\(images.count) images")
        let first = try #require(images.first)
        #expect(first.pixels.pixel(x: 0, y: 0).alpha == 255 && first.pixels.pixel(x: 0, y: 127).alpha == 0)
        #expect(first.hasAlpha && !(images.last?.hasAlpha ?? true))
        #expect(images.last?.pixels == (try CodersManager.shared.decode(data)).pixels)
    }

    @Test func interlacedPNGAndWebPFedByteByByteEndAsTheFullDecode() throws {
        for name in ["gradient-interlaced.png", "gradient-lossy.webp", "gradient-lossless.webp"] {
            let data = try Fixture.data(name)
            let coder = try #require(CodersManager.shared.incrementalDecoder(for: data))
            let images = (1...data.count).compactMap { coder.update(data.prefix($0)) }
            if name.hasSuffix(".png") { #expect(images.count == 7, "one image per Adam7 pass") }
            #expect(images.count > 1, "\(name): \(images.count) images")
            let last = try #require(images.last)
            #expect(TransformerGoldenTests.maximumDifference(last.pixels, try CodersManager.shared.decode(data).pixels) == 0, "\(name)")
        }
    }

    @Test func progressiveJPEGStopsAfter500Scans() throws {
        // The last scan repeated 600 times: libjpeg only warns, so the stream's limit must stop it.
        let data = try Fixture.data("large-progressive.jpg")
        let markers = scanStarts(data)
        let lastScan = data[markers[markers.count - 2]..<markers[markers.count - 1]]
        var hostile = data.prefix(markers[markers.count - 1])
        for _ in 0..<600 { hostile.append(lastScan) }
        hostile.append(contentsOf: [0xFF, 0xD9])
        let coder = try #require(CodersManager.shared.incrementalDecoder(for: hostile))
        let images = stride(from: 4096, through: hostile.count + 4095, by: 4096).compactMap {
            coder.update(hostile.prefix(min($0, hostile.count)))
        }
        #expect(!images.isEmpty && images.count < 500 / 4, "\(images.count) images")
        #expect(coder.update(hostile + Data([0])) == nil, "a stopped stream shows nothing more")
    }

    @Test func corruptDataEndsTheStreamQuietly() throws {
        for name in ["large-progressive.jpg", "gradient-interlaced.png", "gradient-lossy.webp"] {
            let data = try Fixture.data(name)
            let coder = try #require(CodersManager.shared.incrementalDecoder(for: data))
            var broken = data.prefix(data.count / 3)
            broken.append(Data(repeating: 0xFF, count: 4096))
            broken.append(Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 131) }))
            _ = stride(from: 256, through: broken.count, by: 256).compactMap { coder.update(broken.prefix($0)) }
            #expect(coder.update(broken + data) == nil, "\(name)")
        }
    }

    @Test func webPShowsRowsAsTheyArrive() throws {
        let images = try partialImages("gradient-lossy.webp")
        #expect(!images.isEmpty)
        #expect(images.allSatisfy { $0.pixelWidth == 64 && $0.pixelHeight == 48 })
        #expect(CodersManager.shared.incrementalDecoder(for: try Fixture.data("animated.gif")) == nil, "GIF has no progressive decoder")
    }
}

@Suite("Progressive PNG")
struct ProgressivePNGTests {
    @Test func rowsArriveInOrder() throws {
        // An uncompressed-ish PNG large enough to arrive in several pieces.
        var straight: [UInt8] = []
        for y in 0..<64 { for x in 0..<64 { straight += [UInt8(x * 4), UInt8(y * 4), UInt8((x ^ y) & 0xFF), 255] } }
        let data = try CodersManager.shared.encode(Image(pixels: PixelBuffer(width: 64, height: 64, straightRGBA: straight)), as: .png)
        let coder = try #require(CodersManager.shared.incrementalDecoder(for: data.prefix(64)))
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
        let coder = try #require(CodersManager.shared.incrementalDecoder(for: data))
        let shown = stride(from: 100, through: data.count, by: 40).compactMap { coder.update(data.prefix($0)) }
        #expect(!shown.isEmpty)
        #expect(shown.allSatisfy { $0.pixelWidth == 64 && $0.pixelHeight == 48 })
    }
}

/// Shows a 1x1 image for every update, and counts them.
private final class CountingProgressiveDecoder: IncrementalImageDecoder {
    let updates = Locked(0)

    func update(_ data: Data) -> Image? {
        updates.withLock { $0 += 1 }
        return Image(pixels: PixelBuffer(width: 1, height: 1, premultipliedRGBA: [9, 9, 9, 255]))
    }
}

/// A plugin's GIF coder: decodes through giflib like the built-in one, and adds progressive
/// decoding, but no frames on demand.
private struct ProgressiveGIFCoder: ProgressiveImageCoder {
    func canDecode(_ format: ImageFormat) -> Bool { format == .gif }
    func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image { try GIFCoder().decode(data, options: options) }
    func canEncode(to format: ImageFormat) -> Bool { false }
    func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data { Data() }
    func incrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        CountingProgressiveDecoder()
    }
}

/// A plugin's JPEG coder with no progressive decoding.
private struct PlainJPEGCoder: ImageCoder {
    func canDecode(_ format: ImageFormat) -> Bool { format == .jpeg }
    func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image { try JPEGCoder().decode(data, options: options) }
    func canEncode(to format: ImageFormat) -> Bool { false }
    func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data { Data() }
}

@Suite("Coder plugins")
struct CoderPluginTests {
    @Test("a plugin adds progressive or animated decoding by conforming; the newest coder for a format decides")
    func capabilities() throws {
        let manager = CodersManager()
        let gif = try Fixture.data("animated.gif")
        let jpeg = try Fixture.data("gradient-progressive.jpg")
        #expect(manager.incrementalDecoder(for: gif) == nil)
        #expect(try manager.animatedImageProvider(for: gif)?.frameCount == 3)
        #expect(manager.incrementalDecoder(for: jpeg) != nil)

        manager.add(ProgressiveGIFCoder())
        let progressive = try #require(manager.incrementalDecoder(for: gif) as? CountingProgressiveDecoder)
        #expect(progressive.update(gif)?.pixelWidth == 1 && progressive.updates.withLock { $0 } == 1)
        #expect(try manager.animatedImageProvider(for: gif) == nil, "the newest GIF coder decodes no frames on demand")

        manager.add(PlainJPEGCoder())
        #expect(manager.incrementalDecoder(for: jpeg) == nil, "the newest JPEG coder has no progressive decoding")
        #expect(try manager.decode(jpeg).pixelWidth == 64)
    }
}
