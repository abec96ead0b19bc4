public import Foundation
import CWebP

/// Partial images of a WebP download through libwebp's incremental decoder (`WebPIDecoder`),
/// kept for the whole download and given only the bytes that are new: the rows decoded so far,
/// the rest transparent, each time more rows are ready. Animated WebP shows nothing until
/// complete.
public final class ProgressiveWebPDecoder: ProgressiveImageCoder {
    private struct State {
        var decoder: OpaquePointer?
        var fed = 0
        var failed = false
        var shownRows = 0
    }

    private let options: DecodeOptions
    private let state = Locked(State())

    /// A decoder for one download.
    public init(options: DecodeOptions = DecodeOptions()) {
        self.options = options
    }

    deinit {
        state.withLock { state in state.decoder.map { WebPIDelete($0) } }
    }

    public func update(_ data: Data) -> Image? {
        state.withLock { state in
            data.withUnsafeBytes { bytes in update(&state, bytes) }
        }
    }

    private func update(_ state: inout State, _ bytes: UnsafeRawBufferPointer) -> Image? {
        guard !state.failed, bytes.count > state.fed, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        if state.decoder == nil, !start(&state, bytes) { return nil }
        let status = WebPIAppend(state.decoder, base + state.fed, bytes.count - state.fed)
        state.fed = bytes.count
        guard status == VP8_STATUS_OK || status == VP8_STATUS_SUSPENDED else {
            state.failed = true
            return nil
        }
        var lastRow: Int32 = 0, width: Int32 = 0, height: Int32 = 0, stride: Int32 = 0
        guard let rows = WebPIDecGetRGB(state.decoder, &lastRow, &width, &height, &stride), Int(lastRow) > state.shownRows else { return nil }
        state.shownRows = Int(lastRow)
        // Only rows up to lastRow are written; the rest of libwebp's buffer is undefined.
        let rowBytes = Int(width) * 4
        var straight = [UInt8](repeating: 0, count: rowBytes * Int(height))
        straight.withUnsafeMutableBytes { target in
            for row in 0..<Int(lastRow) {
                target.baseAddress!.advanced(by: row * rowBytes).copyMemory(from: rows + row * Int(stride), byteCount: rowBytes)
            }
        }
        let image = Image(pixels: PixelBuffer(width: Int(width), height: Int(height), straightRGBA: straight),
                          scale: options.scale, sourceFormat: .webP, hasAlpha: true)
        return CodersManager.fitted(image, into: options.thumbnail)
    }

    /// Makes the incremental decoder once the features can be read: a still image within the limits.
    private func start(_ state: inout State, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &features)
        guard status == VP8_STATUS_OK else {
            state.failed = status != VP8_STATUS_NOT_ENOUGH_DATA
            return false
        }
        guard features.has_animation == 0,
              (try? options.limits.check(width: Int(features.width), height: Int(features.height), inputSize: bytes.count)) != nil else {
            state.failed = true
            return false
        }
        // Straight RGBA premultiplied by PixelBuffer, as the full decode does, so the last
        // partial image is the full one to the bit.
        state.decoder = WebPINewRGB(MODE_RGBA, nil, 0, 0)
        state.failed = state.decoder == nil
        return state.decoder != nil
    }
}
