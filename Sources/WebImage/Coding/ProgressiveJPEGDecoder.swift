public import Foundation
import CWebImageCodecs

/// Partial images of a JPEG download, decoded incrementally: one libjpeg decompressor (in the C
/// shim, with a suspending data source) is kept for the whole download and fed only the bytes
/// that are new, so no byte is parsed twice.
///
/// A progressive JPEG runs in libjpeg's buffered-image mode: each scan is absorbed once into the
/// coefficients, and whenever a scan is complete the newest one is drawn, so the picture sharpens
/// scan by scan. A baseline JPEG shows its rows top down as they arrive, each time at least an
/// eighth more of the height is ready; rows not yet received are transparent. Thumbnails decode
/// at the DCT scale a full decode would use and are resampled the rest of the way.
public final class ProgressiveJPEGDecoder: ProgressiveImageCoder {
    private struct State {
        var stream: OpaquePointer?
        var fed = 0
        var failed = false
        var shownRows = 0
        var inverted = false
        var orientation = ExifOrientation.up
    }

    private let options: DecodeOptions
    private let state = Locked(State())

    /// A decoder for one download, decoding with `options` (thumbnail, limits).
    public init(options: DecodeOptions = DecodeOptions()) {
        self.options = options
    }

    deinit {
        state.withLock { cwi_jpeg_stream_destroy($0.stream) }
    }

    public func update(_ data: Data) -> Image? {
        state.withLock { state in
            data.withUnsafeBytes { bytes in update(&state, bytes) }
        }
    }

    private func update(_ state: inout State, _ bytes: UnsafeRawBufferPointer) -> Image? {
        guard !state.failed, bytes.count > state.fed, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        if state.stream == nil, !start(&state, bytes) { return nil }
        let status = cwi_jpeg_stream_feed(state.stream, base + state.fed, bytes.count - state.fed)
        state.fed = bytes.count
        guard status == 1, let pixels = cwi_jpeg_stream_image(state.stream)?.pointee else {
            state.failed = status < 0
            return nil
        }
        let streamed = StreamedImage(pixels: pixels)
        let rows = streamed.visibleRows, height = Int(pixels.height)
        guard pixels.passes > 0 || rows == height || rows >= state.shownRows + max(1, height / 8) else { return nil }
        state.shownRows = rows
        return streamed.image(format: .jpeg, premultiplied: true, inverted: state.inverted, orientation: state.orientation,
                              options: options)
    }

    /// Makes the stream once the header can be read and is within the limits.
    private func start(_ state: inout State, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var header = cwi_header_info()
        guard cwi_jpeg_read_header(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &header) == 0 else { return false }
        let width = Int(header.width), height = Int(header.height)
        guard (try? options.limits.check(width: width, height: height, inputSize: bytes.count)) != nil else {
            state.failed = true
            return false
        }
        let factor = JPEGCoder.scalingFactor(width: width, height: height, thumbnail: options.thumbnail)
        state.stream = cwi_jpeg_stream_create(UInt32(factor.num), UInt32(factor.denom))
        state.failed = state.stream == nil
        state.inverted = JPEGSegments.hasAdobeMarker(bytes)
        state.orientation = ExifReader.orientation(inJPEG: bytes) ?? .up
        return state.stream != nil
    }
}
