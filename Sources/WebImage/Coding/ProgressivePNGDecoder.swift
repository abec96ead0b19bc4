public import Foundation
import CWebImageCodecs

/// Partial images of a PNG download through libpng's progressive reader (in the C shim), kept
/// for the whole download and fed only the bytes that are new: the rows received so far, the
/// rest transparent; an interlaced PNG shows after each complete Adam7 pass, its missing pixels
/// still transparent.
public final class ProgressivePNGDecoder: ProgressiveImageCoder {
    private struct State {
        var stream: OpaquePointer?
        var fed = 0
        var failed = false
    }

    private let options: DecodeOptions
    private let state = Locked(State())

    /// A decoder for one download.
    public init(options: DecodeOptions = DecodeOptions()) {
        self.options = options
    }

    deinit {
        state.withLock { cwi_png_stream_destroy($0.stream) }
    }

    public func update(_ data: Data) -> Image? {
        state.withLock { state in
            data.withUnsafeBytes { bytes in update(&state, bytes) }
        }
    }

    private func update(_ state: inout State, _ bytes: UnsafeRawBufferPointer) -> Image? {
        guard !state.failed, bytes.count > state.fed, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        if state.stream == nil, !start(&state, bytes) { return nil }
        let status = cwi_png_stream_feed(state.stream, base + state.fed, bytes.count - state.fed)
        state.fed = bytes.count
        guard status == 1, let pixels = cwi_png_stream_image(state.stream)?.pointee else {
            state.failed = status < 0
            return nil
        }
        return StreamedImage(pixels: pixels).image(format: .png, premultiplied: false, options: options)
    }

    /// Makes the stream once the header can be read and is within the limits.
    private func start(_ state: inout State, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var header = cwi_header_info()
        guard cwi_png_read_header(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &header) == 0 else { return false }
        guard (try? options.limits.check(width: Int(header.width), height: Int(header.height), inputSize: bytes.count)) != nil else {
            state.failed = true
            return false
        }
        state.stream = cwi_png_stream_create(header.width, header.height)
        state.failed = state.stream == nil
        return state.stream != nil
    }
}
