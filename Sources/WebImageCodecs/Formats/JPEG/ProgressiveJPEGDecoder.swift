package import Foundation
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
package final class ProgressiveJPEGDecoder: IncrementalImageDecoder {
    /// The libjpeg stream and what the header said about the colours and the orientation.
    private struct Stream {
        let handle: OpaquePointer
        let inverted: Bool
        let orientation: ExifOrientation
    }

    private struct State {
        var feed = IncrementalFeed<Stream>()
        var shownRows = 0
    }

    private let options: DecodeOptions
    private let state = Locked(State())

    /// A decoder for one download, decoding with `options` (thumbnail, limits).
    public init(options: DecodeOptions = DecodeOptions()) {
        self.options = options
    }

    deinit {
        state.withLock { cwi_jpeg_stream_destroy($0.feed.decoder?.handle) }
    }

    public func update(_ data: Data) -> Image? {
        state.withLock { state in
            let drawn = data.withUnsafeBytes { bytes in
                state.feed.update(bytes, start: start) { stream, new -> (canGoOn: Bool, made: (Stream, cwi_jpeg_image)?) in
                    let status = cwi_jpeg_stream_feed(stream.handle, new.baseAddress, new.count)
                    guard status == 1, let pixels = cwi_jpeg_stream_image(stream.handle)?.pointee else { return (status >= 0, nil) }
                    return (true, (stream, pixels))
                }
            }
            guard let (stream, pixels) = drawn else { return nil }
            let streamed = StreamedImage(pixels: pixels)
            let rows = streamed.visibleRows
            let height = Int(pixels.height)
            guard pixels.passes > 0 || rows == height || rows >= state.shownRows + max(1, height / 8) else { return nil }
            state.shownRows = rows
            return streamed.image(
                format: .jpeg, opaque: true, inverted: stream.inverted, orientation: stream.orientation,
                options: options)
        }
    }

    /// Makes the stream once the header can be read and is within the limits.
    private func start(_ bytes: UnsafeRawBufferPointer) -> IncrementalFeed<Stream>.Start {
        var header = cwi_header_info()
        guard cwi_jpeg_read_header(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &header) == 0 else {
            return .waiting
        }
        let width = Int(header.width)
        let height = Int(header.height)
        let factor = JPEGCoder.scalingFactor(width: width, height: height, thumbnail: options.thumbnail)
        let scaledWidth = Int(JPEGCoder.scaled(Int32(width), factor))
        let scaledHeight = Int(JPEGCoder.scaled(Int32(height), factor))
        guard (try? options.limits.checkDeclared(width: width, height: height)) != nil,
            (try? options.limits.check(width: scaledWidth, height: scaledHeight, inputSize: bytes.count)) != nil
        else { return .refused }
        guard let handle = cwi_jpeg_stream_create(UInt32(factor.num), UInt32(factor.denom)) else { return .refused }
        return .ready(
            Stream(
                handle: handle, inverted: JPEGSegments.hasAdobeMarker(bytes),
                orientation: ExifReader.orientation(inJPEG: bytes) ?? .up))
    }
}
