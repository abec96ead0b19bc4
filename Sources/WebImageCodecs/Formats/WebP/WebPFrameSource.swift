import CWebP
import Foundation

/// Animated WebP for ``AnimatedImageDecoder``: durations and loop count from the demuxer,
/// composed frames from libwebp's animation decoder (which rewinds with `WebPAnimDecoderReset`).
struct WebPFrameSource: AnimationFrameSource {
    /// Owns the copy of the file and the libwebp decoder that points into it.
    final class Decoder {
        let bytes: UnsafeMutableBufferPointer<UInt8>
        let pointer: OpaquePointer

        init?(_ data: Data) {
            bytes = .allocate(capacity: max(1, data.count))
            _ = bytes.initialize(from: data)
            var options = WebPAnimDecoderOptions()
            guard WebPAnimDecoderOptionsInit(&options) != 0 else {
                bytes.deallocate()
                return nil
            }
            options.color_mode = MODE_RGBA
            options.use_threads = 0
            var webp = WebPData(bytes: bytes.baseAddress, size: data.count)
            guard let decoder = WebPAnimDecoderNew(&webp, &options) else {
                bytes.deallocate()
                return nil
            }
            pointer = decoder
        }

        deinit {
            WebPAnimDecoderDelete(pointer)
            bytes.deallocate()
        }
    }

    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int
    let durations: [Duration]
    private let decoder: Decoder

    init(_ data: Data, limits: DecodeLimits) throws(WebImageError) {
        // libwebp's animation decoder allocates its whole canvas as it is created, so the canvas
        // is checked from the header first: a 65536x65535 canvas would otherwise take 17 GB.
        guard let features = WebPCoder.features(data) else { throw WebImageError(.decodeFailed, "WebP header unreadable") }
        let canvas = (width: Int(features.width), height: Int(features.height))
        try limits.check(width: canvas.width, height: canvas.height, inputSize: data.count)
        guard let decoder = Decoder(data) else { throw WebImageError(.decodeFailed, "WebP animation unreadable") }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder.pointer, &info) != 0, info.frame_count > 0,
            (Int(info.canvas_width), Int(info.canvas_height)) == canvas
        else {
            throw WebImageError(.decodeFailed, "WebP animation info unreadable")
        }
        canvasWidth = canvas.width
        canvasHeight = canvas.height
        loopCount = Int(info.loop_count)
        durations = Self.durations(data, count: Int(info.frame_count))
        self.decoder = decoder
    }

    private static func durations(_ data: Data, count: Int) -> [Duration] {
        data.withUnsafeBytes { bytes in
            var webp = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
            guard let demux = WebPDemux(&webp) else { return Array(repeating: .milliseconds(100), count: count) }
            defer { WebPDemuxDelete(demux) }
            return (1...count).map { number in
                var iterator = WebPIterator()
                defer { WebPDemuxReleaseIterator(&iterator) }
                guard WebPDemuxGetFrame(demux, Int32(number), &iterator) != 0 else { return .milliseconds(100) }
                return iterator.duration < 11 ? .milliseconds(100) : .milliseconds(Int(iterator.duration))
            }
        }
    }

    mutating func rewind() throws(WebImageError) {
        WebPAnimDecoderReset(decoder.pointer)
    }

    mutating func next() throws(WebImageError) -> PixelBuffer {
        var buffer: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard WebPAnimDecoderHasMoreFrames(decoder.pointer) != 0, WebPAnimDecoderGetNext(decoder.pointer, &buffer, &timestamp) != 0,
            let buffer
        else {
            throw WebImageError(.decodeFailed, "WebP animation frame unreadable")
        }
        let straight = [UInt8](UnsafeBufferPointer(start: buffer, count: canvasWidth * canvasHeight * 4))
        return PixelBuffer(width: canvasWidth, height: canvasHeight, straightRGBA: straight)
    }
}
