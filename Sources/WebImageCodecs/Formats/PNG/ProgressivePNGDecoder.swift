package import Foundation
import CWebImageCodecs

/// Partial images of a PNG download through libpng's progressive reader (in the C shim), kept
/// for the whole download and fed only the bytes that are new: the rows received so far, the
/// rest transparent; an interlaced PNG shows after each complete Adam7 pass, its missing pixels
/// still transparent.
package final class ProgressivePNGDecoder: IncrementalImageDecoder {
    private let options: DecodeOptions
    private let feed = Locked(IncrementalFeed<OpaquePointer>())

    /// A decoder for one download.
    public init(options: DecodeOptions = DecodeOptions()) {
        self.options = options
    }

    deinit {
        feed.withLock { cwi_png_stream_destroy($0.decoder) }
    }

    public func update(_ data: Data) -> Image? {
        feed.withLock { feed in
            data.withUnsafeBytes { bytes in
                feed.update(bytes, start: start) { stream, new -> (canGoOn: Bool, made: Image?) in
                    let status = cwi_png_stream_feed(stream, new.baseAddress, new.count)
                    guard status == 1, let pixels = cwi_png_stream_image(stream)?.pointee else { return (status >= 0, nil) }
                    return (true, StreamedImage(pixels: pixels).image(format: .png, opaque: false, options: options))
                }
            }
        }
    }

    /// Makes the stream once the header can be read and is within the limits.
    private func start(_ bytes: UnsafeRawBufferPointer) -> IncrementalFeed<OpaquePointer>.Start {
        var header = cwi_header_info()
        guard cwi_png_read_header(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &header) == 0 else {
            return .waiting
        }
        guard (try? options.limits.check(width: Int(header.width), height: Int(header.height), inputSize: bytes.count)) != nil,
            let stream = cwi_png_stream_create(header.width, header.height)
        else { return .refused }
        return .ready(stream)
    }
}
