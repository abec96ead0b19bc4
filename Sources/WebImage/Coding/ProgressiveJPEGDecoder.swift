public import Foundation

/// Partial images of a JPEG download. A progressive JPEG shows a new image each time a scan is
/// complete (the next scan's SOS marker or the end marker has arrived), so the picture sharpens
/// scan by scan; a baseline JPEG shows the rows received, each time the data has grown by a
/// quarter. libjpeg-turbo decodes the truncated data and leaves the rest grey.
public final class ProgressiveJPEGDecoder: ProgressiveImageCoder {
    private struct State {
        var shownScans = 0
        var shownBytes = 0
    }

    private let options: DecodeOptions
    private let state = Locked(State())

    /// A decoder for one download, decoding with `options` (thumbnail, limits).
    public init(options: DecodeOptions = DecodeOptions()) {
        var options = options
        options.allowsTruncatedData = true
        self.options = options
    }

    public func update(_ data: Data) -> Image? {
        let (scans, progressive) = data.withUnsafeBytes { Self.completeScans($0) }
        let due = state.withLock { state -> Bool in
            let due = progressive ? scans > state.shownScans : data.count >= state.shownBytes + max(1, state.shownBytes / 4) && scans == 0
            guard due else { return false }
            state.shownScans = scans
            state.shownBytes = data.count
            return true
        }
        guard due else { return nil }
        return try? JPEGCoder().decode(data, options: options)
    }

    /// How many scans are complete, and whether the frame is progressive (SOF2). A scan is
    /// complete once another marker that ends it (SOS or EOI) has arrived.
    static func completeScans(_ bytes: UnsafeRawBufferPointer) -> (Int, Bool) {
        var scans = 0, started = 0, progressive = false
        var index = 2
        while index + 1 < bytes.count {
            guard bytes[index] == 0xFF else { index += 1; continue }
            let marker = bytes[index + 1]
            switch marker {
            case 0xC2: progressive = true
            case 0xDA: started += 1; if started > 1 { scans += 1 }
            case 0xD9: if started > 0 { scans += 1 }; return (scans, progressive)
            default: break
            }
            // Marker segments before the first scan have lengths: skip their payloads.
            if started == 0, marker != 0xD8, marker != 0x01, !(0xD0...0xD7).contains(marker), index + 3 < bytes.count {
                index += 2 + (Int(bytes[index + 2]) << 8 | Int(bytes[index + 3]))
            } else {
                index += 2
            }
        }
        return (scans, progressive)
    }
}
