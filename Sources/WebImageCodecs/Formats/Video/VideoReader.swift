#if Video
import CWebImageVideo
import WebImageCore

/// One video open in FFmpeg for one decode: borrows the caller's bytes, which must outlive it,
/// and is closed by its owner (``close()``). Not shared between threads.
final class VideoReader {
    private let handle: OpaquePointer
    /// The video stream's description.
    let info: wiv_info
    /// FFmpeg's message for the last failure.
    private var message = [CChar](repeating: 0, count: 256)

    init(bytes: UnsafeRawBufferPointer, selection: VideoFrameSelection, maximumPixels: Int) throws(WebImageError) {
        var handle: OpaquePointer?
        let timeLimit = selection.timeLimit.components
        let nanoseconds = UInt64(max(0, timeLimit.seconds)) * 1_000_000_000 + UInt64(max(0, timeLimit.attoseconds / 1_000_000_000))
        let analyze =
            selection.maximumAnalyzeDuration.map {
                Int64($0.components.seconds) * 1_000_000 + $0.components.attoseconds / 1_000_000_000_000
            } ?? 0
        let code = message.withUnsafeMutableBufferPointer { text in
            Int(
                wiv_open(
                    bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, Int64(maximumPixels), nanoseconds,
                    Int64(selection.probeSize),
                    analyze, &handle, text.baseAddress, text.count))
        }
        guard code == WIV_OK, let handle else { throw Self.error(code, message) }
        self.handle = handle
        info = wiv_get_info(handle)
    }

    /// Goes to the last keyframe at or before `seconds`.
    func seek(to seconds: Double) throws(WebImageError) {
        let code = Int(message.withUnsafeMutableBufferPointer { wiv_seek(handle, seconds, $0.baseAddress, $0.count) })
        guard code == WIV_OK else { throw Self.error(code, message) }
    }

    /// Decodes the next frame (or keyframe); returns its time in seconds, nil at the end.
    func nextFrame(keyframesOnly: Bool) throws(WebImageError) -> Double? {
        var seconds = 0.0
        var isKeyframe: Int32 = 0
        let code = Int(
            message.withUnsafeMutableBufferPointer {
                wiv_next_frame(handle, keyframesOnly ? 1 : 0, &seconds, &isKeyframe, $0.baseAddress, $0.count)
            })
        if code == WIV_END { return nil }
        guard code == WIV_OK else { throw Self.error(code, message) }
        return seconds
    }

    /// The frame decoded last, as opaque RGBA at its own size: 8 bits a sample, or 16
    /// (`highBitDepth`) in the stream's own transfer.
    func pixels(highBitDepth: Bool = false) throws(WebImageError) -> PixelBuffer {
        var width: Int32 = 0
        var height: Int32 = 0
        wiv_frame_size(handle, &width, &height)
        let bits = highBitDepth ? 16 : 8
        var bytes = try PixelBuffer.zeroedBytes(width: Int(width), height: Int(height), bytesPerPixel: bits / 2)
        let code = Int(
            bytes.withUnsafeMutableBufferPointer { pixels in
                message.withUnsafeMutableBufferPointer {
                    wiv_copy_rgba(handle, Int32(bits), pixels.baseAddress, Int(width) * bits / 2, $0.baseAddress, $0.count)
                }
            })
        guard code == WIV_OK else { throw Self.error(code, message) }
        return PixelBuffer(width: Int(width), height: Int(height), bitsPerSample: bits, bytes: bytes)
    }

    /// The stream's colour description as it stands: the light levels the frames decoded so far
    /// state are in it. H.273's "unspecified" (2) and reserved 0 are left out (a matrix of 0 is
    /// identity, RGB, and kept).
    func color() -> ColorDescription {
        func specified(_ code: Int32, zeroIsValid: Bool = false) -> Int? {
            code == 2 || (code == 0 && !zeroIsValid) ? nil : Int(code)
        }
        var light: Int32 = 0
        var display: Int32 = 0
        wiv_get_light(handle, &light, &display)
        let peak = light > 0 ? light : display
        return ColorDescription(
            bitDepth: info.bit_depth > 0 ? Int(info.bit_depth) : 8, primaries: specified(info.primaries),
            transfer: specified(info.transfer), matrix: specified(info.matrix, zeroIsValid: true),
            peakLuminance: peak > 0 ? Int(peak) : nil)
    }

    func close() {
        wiv_close(handle)
    }

    /// The error for one of CWebImageVideo's codes (its own, or FFmpeg's AVERROR ones).
    private static func error(_ code: Int, _ message: [CChar]) -> WebImageError {
        let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch code {
        case WIV_TIMED_OUT, WIV_TOO_LARGE, WIV_NO_MEMORY: return WebImageError(.tooLarge, text)
        case WIV_UNSUPPORTED: return WebImageError(.unsupportedFormat, text)
        default: return WebImageError(.decodeFailed, text)
        }
    }
}
#endif
