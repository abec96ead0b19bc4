import Foundation
import Testing
@testable import WebImageCodecs
@testable import WebImageServer
import WebImageTestSupport

/// The processor's YCbCr path (`ImageProcessor+Planar.swift`): a JPEG resized into a JPEG or a
/// WebP with nothing else asked is ``JPEGPlanarResize``'s result, byte for byte; a request that
/// asks for anything more goes the general path through RGBA pixels.
@Suite("JPEG to JPEG in YCbCr planes through the processor")
struct PlanarPathTests {
    static let processor = ImageProcessor(
        coders: .shared, maximumSourcePixels: 50_000_000, maximumAnimationFrames: 100, defaultQuality: 80,
        resultLimits: ProcessingPlan.Limits(maximumDimension: 8192, maximumPixels: 50_000_000))

    /// A 640x480 photograph-like JPEG: gradients and noise.
    static func photo() throws -> Data {
        var random = SplitMix64(seed: 3)
        var bytes = [UInt8](repeating: 255, count: 640 * 480 * 4)
        for index in 0..<(640 * 480) {
            let (x, y) = (index % 640, index / 640)
            let noise = UInt8(random.next() % 32)
            (bytes[index * 4], bytes[index * 4 + 1], bytes[index * 4 + 2]) = (UInt8(x / 3) + noise, UInt8(y / 2) + noise / 2, 100 + noise)
        }
        return try JPEGCoder().encode(
            Image(pixels: PixelBuffer(width: 640, height: 480, straightRGBA: bytes)), as: .jpeg, options: EncodeOptions(quality: 0.9))
    }

    private func processed(
        _ options: String, _ source: Data, as format: ImageFormat = .jpeg, processor: ImageProcessor = Self.processor
    ) throws -> Data {
        try processor.process(source, options: try OptionsParser().parse(options.split(separator: "/")), format: format)
    }

    @Test("a fit, a fill (the resize keeping its window), a size the DCT scaling reaches exactly, and a quality search take it")
    func taken() throws {
        let source = try Self.photo()
        let cases: [(String, JPEGPlanarResize, Int)] = [
            // 640x480 fit into 300x300 is 300x225: decoded at 1/2 (320x240), resampled once.
            ("rs:fit:300:300", JPEGPlanarResize(width: 300, height: 225, filter: .lanczos3), 80),
            // fill 100x100: 133x100 by lanczos3 from the 1/4 decode (160x120), the middle 100 kept
            // (from column 17: imgproxy centres the odd pixel to the right).
            (
                "rs:fill:100:100/q:70",
                JPEGPlanarResize(width: 133, height: 100, window: ResizeWindow(x: 17, y: 0, width: 100, height: 100), filter: .lanczos3), 70
            ),
            // 320x240 is the 1/2 decode itself: no resampling, every kernel copies.
            ("rs:fit:320:320/ra:linear", JPEGPlanarResize(width: 320, height: 240, filter: .bilinear), 80),
        ]
        for (options, resize, quality) in cases {
            let expected = try #require(try resize.recompress(source, quality: quality, limits: DecodeLimits()))
            #expect(try processed(options, source) == expected, "\(options)")
        }
        // autoquality searches the encode of the same planes: the answer is one of them.
        let answer = try processed("rs:fit:300:300/aq:size:6000:40:90", source)
        let resize = JPEGPlanarResize(width: 300, height: 225, filter: .lanczos3)
        let encodes = try (40...90).map { try #require(try resize.recompress(source, quality: $0, limits: DecodeLimits())) }
        #expect(encodes.contains(answer))
    }

    @Test("rotation, a filter, padding, a trim and progressive output go the general path, to the same size")
    func declined() throws {
        let source = try Self.photo()
        let planar = try #require(
            try JPEGPlanarResize(width: 300, height: 225, filter: .lanczos3).recompress(source, quality: 80, limits: DecodeLimits()))
        var progressive = Self.processor
        progressive.encoderSettings.jpegProgressive = true
        let cases: [(String, ImageProcessor, Int, Int)] = [
            ("rs:fit:300:300/rot:90", Self.processor, 225, 300), ("rs:fit:300:300/sh:1", Self.processor, 300, 225),
            ("rs:fit:300:300/pd:2", Self.processor, 304, 229), ("rs:fit:300:300/t:10", Self.processor, 300, 225),
            ("rs:fit:300:300", progressive, 300, 225),
        ]
        for (options, processor, width, height) in cases {
            let result = try processed(options, source, processor: processor)
            let header = try ImageHeader(data: result)
            #expect(result != planar && header.width == width && header.height == height, "\(options): \(header.width)x\(header.height)")
        }
    }

    @Test("a WebP result takes it too, at the server's WebP effort and preset; progressive JPEG settings do not keep it off")
    func webP() throws {
        let source = try Self.photo()
        var processor = Self.processor
        processor.encoderSettings.webPEffort = 2
        processor.encoderSettings.webPPreset = .photo
        processor.encoderSettings.jpegProgressive = true
        let resize = JPEGPlanarResize(width: 300, height: 225, filter: .lanczos3)
        var options = processor.encodeOptions()
        options.quality = 0.7
        let planes = try #require(try resize.decode(source, limits: DecodeLimits()))
        let expected = try WebPCoder.encode(WebPCoder.YUVPlanes(resize.resampled(planes)), options: options)
        #expect(try processed("rs:fit:300:300/q:70", source, as: .webP, processor: processor) == expected)
        // At another effort the bytes differ: the setting reaches the encode.
        options.webPMethod = 6
        #expect(try WebPCoder.encode(WebPCoder.YUVPlanes(resize.resampled(planes)), options: options) != expected)
        // A filter sends it the general path, to the same size.
        let general = try processed("rs:fit:300:300/q:70/bl:2", source, as: .webP, processor: processor)
        let header = try ImageHeader(data: general)
        #expect(general != expected && header.format == .webP && header.width == 300 && header.height == 225)
    }
}
