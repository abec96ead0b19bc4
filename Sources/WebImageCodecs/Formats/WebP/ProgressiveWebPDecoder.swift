package import Foundation
import CWebP

/// Partial images of a WebP download through libwebp's incremental decoder (`WebPIDecoder`),
/// kept for the whole download and given only the bytes that are new: the rows decoded so far,
/// the rest transparent, each time more rows are ready. Animated WebP shows nothing until
/// complete.
package final class ProgressiveWebPDecoder: IncrementalImageDecoder {
    private struct State {
        var feed = IncrementalFeed<OpaquePointer>()
        var shownRows = 0
    }

    private let options: DecodeOptions
    private let state = Locked(State())

    /// A decoder for one download.
    public init(options: DecodeOptions = DecodeOptions()) {
        self.options = options
    }

    deinit {
        state.withLock { state in state.feed.decoder.map { WebPIDelete($0) } }
    }

    public func update(_ data: Data) -> Image? {
        state.withLock { state in
            let decoder = data.withUnsafeBytes { bytes in
                state.feed.update(bytes, start: start) { decoder, new -> (canGoOn: Bool, made: OpaquePointer?) in
                    let status = WebPIAppend(decoder, new.baseAddress, new.count)
                    let canGoOn = status == VP8_STATUS_OK || status == VP8_STATUS_SUSPENDED
                    return (canGoOn, canGoOn ? decoder : nil)
                }
            }
            guard let decoder else { return nil }
            return image(decodedBy: decoder, shownRows: &state.shownRows)
        }
    }

    /// The rows `decoder` has ready, when there are more than `shownRows`.
    private func image(decodedBy decoder: OpaquePointer, shownRows: inout Int) -> Image? {
        var lastRow: Int32 = 0
        var width: Int32 = 0
        var height: Int32 = 0
        var stride: Int32 = 0
        guard let rows = WebPIDecGetRGB(decoder, &lastRow, &width, &height, &stride), Int(lastRow) > shownRows else { return nil }
        shownRows = Int(lastRow)
        // Only rows up to lastRow are written; the rest of libwebp's buffer is undefined.
        let rowBytes = Int(width) * 4
        guard var straight = try? PixelBuffer.zeroedBytes(width: Int(width), height: Int(height)) else { return nil }
        straight.withUnsafeMutableBytes { target in
            for row in 0..<Int(lastRow) {
                target.baseAddress!.advanced(by: row * rowBytes).copyMemory(from: rows + row * Int(stride), byteCount: rowBytes)
            }
        }
        let image = Image(
            pixels: PixelBuffer(width: Int(width), height: Int(height), straightRGBA: straight),
            scale: options.scale, sourceFormat: .webP, hasAlpha: true)
        return CodersManager.fitted(image, into: options.thumbnail)
    }

    /// Makes the incremental decoder once the features can be read: a still image within the limits.
    private func start(_ bytes: UnsafeRawBufferPointer) -> IncrementalFeed<OpaquePointer>.Start {
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &features)
        guard status == VP8_STATUS_OK else { return status == VP8_STATUS_NOT_ENOUGH_DATA ? .waiting : .refused }
        guard features.has_animation == 0,
            (try? options.limits.check(width: Int(features.width), height: Int(features.height), inputSize: bytes.count)) != nil,
            // Straight RGBA, as the full decode gives, so the last partial image is the full one
            // to the bit.
            let decoder = WebPINewRGB(MODE_RGBA, nil, 0, 0)
        else { return .refused }
        return .ready(decoder)
    }
}
