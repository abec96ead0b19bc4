import Foundation

/// An animated PNG frame by frame: each frame rebuilt as a standalone PNG (its own `IHDR`, the
/// file's colour chunks, its data as `IDAT`) for libpng, then composed on the canvas with its
/// blend operation and disposed of as it asks, in straight RGBA of 8 bits a sample, or 16 when the
/// frames are held at 16 bits (`sourceColor`).
struct APNGFrameSource: AnimationFrameSource {
    /// One frame as stored: its control chunk and its compressed data.
    struct StoredFrame {
        let control: APNGFrameControl
        var data: [[UInt8]] = []
    }

    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int
    let durations: [Duration]
    let warnings: [String]
    /// Set when the frames are decoded and composed at 16 bits: what their samples are.
    let sourceColor: ColorDescription?
    private let frames: [StoredFrame]
    private let header: PNGChunk
    private let colourChunks: [PNGChunk]
    private let decodeFrame: @Sendable (Data) throws(WebImageError) -> PixelBuffer
    private var canvas: [UInt8]
    private var position = 0

    /// What opening an animated PNG gives.
    enum Opening {
        /// Its frames, to play.
        case animation(APNGFrameSource)
        /// No frame to play (its first frame chunk out of sequence, or data before any control),
        /// and why: the file is to be shown as its default image.
        case unplayable(String)
    }

    /// Parses the chunks once; `decodeFrame` decodes one standalone PNG to straight pixels: 16-bit
    /// ones, described by `wide`, when it is given, else 8-bit.
    static func open(
        _ bytes: UnsafeRawBufferPointer, limits: DecodeLimits, wide: ColorDescription? = nil,
        decodeFrame: @escaping @Sendable (Data) throws(WebImageError) -> PixelBuffer
    ) throws(WebImageError) -> Opening {
        guard let chunks = PNGChunk.chunks(in: bytes), let header = chunks.first, header.type == "IHDR",
            let width = header.uint32(at: 0).map(Int.init), let height = header.uint32(at: 4).map(Int.init),
            let animation = chunks.first(where: { $0.type == "acTL" }), let plays = animation.uint32(at: 4)
        else {
            throw WebImageError(.decodeFailed, "APNG: no readable header or animation control")
        }
        try limits.check(width: width, height: height, inputSize: bytes.count)
        let stored = try storedFrames(chunks)
        guard !stored.frames.isEmpty else {
            if let cut = stored.cut { return .unplayable(cut) }
            throw WebImageError(.decodeFailed, "APNG: no frames")
        }
        return .animation(
            try APNGFrameSource(
                chunks: chunks, header: header, width: width, height: height, plays: plays, stored: stored, wide: wide,
                decodeFrame: decodeFrame))
    }

    private init(
        chunks: [PNGChunk], header: PNGChunk, width: Int, height: Int, plays: UInt32, stored: (frames: [StoredFrame], cut: String?),
        wide: ColorDescription?, decodeFrame: @escaping @Sendable (Data) throws(WebImageError) -> PixelBuffer
    ) throws(WebImageError) {
        frames = stored.frames
        warnings = stored.cut.map { ["APNG: \($0): the animation ends after frame \(stored.frames.count)"] } ?? []
        canvasWidth = width
        canvasHeight = height
        loopCount = Int(plays)
        durations = frames.map(\.control.duration)
        self.header = header
        colourChunks = chunks.prefix { $0.type != "IDAT" && $0.type != "fdAT" }.filter { !["IHDR", "acTL", "fcTL"].contains($0.type) }
        self.decodeFrame = decodeFrame
        sourceColor = wide
        canvas = try PixelBuffer.zeroedBytes(width: width, height: height, bytesPerPixel: wide == nil ? 4 : 8)
    }

    var holdsHighBitDepth: Bool { sourceColor != nil }

    private var bytesPerPixel: Int { holdsHighBitDepth ? 8 : 4 }

    mutating func rewind() throws(WebImageError) {
        position = 0
        canvas = try PixelBuffer.zeroedBytes(width: canvasWidth, height: canvasHeight, bytesPerPixel: bytesPerPixel)
    }

    mutating func next() throws(WebImageError) -> PixelBuffer {
        guard position < frames.count else { throw WebImageError(.decodeFailed, "APNG: no frame \(position)") }
        let frame = frames[position]
        let control = frame.control
        guard control.width > 0, control.height > 0, control.x + control.width <= canvasWidth, control.y + control.height <= canvasHeight
        else {
            throw WebImageError(.decodeFailed, "APNG: frame \(position) lies outside the canvas")
        }
        let pixels = try decodeFrame(standalone(frame))
        guard pixels.width == control.width, pixels.height == control.height, pixels.bytesPerPixel == bytesPerPixel else {
            throw WebImageError(.decodeFailed, "APNG: frame \(position) decoded at the wrong size or depth")
        }
        // The spec: a first frame disposed to "previous" is disposed to the background.
        let dispose = position == 0 && control.dispose == .previous ? .background : control.dispose
        let saved = dispose == .previous ? canvas : nil
        if holdsHighBitDepth {
            draw(pixels, at: control, access: Straight16PixelAccess.self)
        } else {
            draw(pixels, at: control, access: StraightPixelAccess.self)
        }
        let composed = PixelBuffer(width: canvasWidth, height: canvasHeight, bitsPerSample: bytesPerPixel * 2, bytes: canvas)
        switch dispose {
        case .background: clear(control)
        case .previous: canvas = saved ?? canvas
        case .none: break
        }
        position += 1
        return composed
    }

    /// The frames in file order, up to the first frame chunk out of sequence (with the reason
    /// as `cut`). The default image (`IDAT`) is the first frame when an `fcTL` precedes it, and
    /// hidden otherwise.
    ///
    /// `fcTL` and `fdAT` chunks are numbered from 0 without gaps (APNG 1.0, "Chunk sequence
    /// numbers"), so that a decoder can tell chunks that were reordered, repeated or lost. The
    /// frames before such a chunk play, as browsers play them; the frame it belongs to, left
    /// incomplete, does not.
    private static func storedFrames(_ chunks: [PNGChunk]) throws(WebImageError) -> (frames: [StoredFrame], cut: String?) {
        var frames: [StoredFrame] = []
        var expected: UInt32 = 0
        for chunk in chunks {
            if let found = sequenceNumber(of: chunk), found != expected {
                let reason = "\(chunk.type) chunk number \(found) where \(expected) was expected"
                // A data chunk out of place leaves its frame incomplete; a control chunk ends the
                // frame before it complete.
                if chunk.type == "fdAT", !frames.isEmpty { frames.removeLast() }
                return (frames.filter { !$0.data.isEmpty }, reason)
            }
            switch chunk.type {
            case "fcTL":
                guard let control = APNGFrameControl(chunk) else { throw WebImageError(.decodeFailed, "APNG: unreadable frame control") }
                frames.append(StoredFrame(control: control))
                expected += 1
            case "IDAT" where frames.count == 1:
                frames[0].data.append(chunk.data)
            case "fdAT":
                guard !frames.isEmpty, chunk.data.count >= 4 else {
                    return (frames.filter { !$0.data.isEmpty }, "frame data without a sequence number or before any frame control")
                }
                frames[frames.count - 1].data.append(Array(chunk.data.dropFirst(4)))
                expected += 1
            default:
                break
            }
        }
        return (frames.filter { !$0.data.isEmpty }, nil)
    }

    /// The sequence number an `fcTL` or `fdAT` chunk starts with; nil for other chunks.
    private static func sequenceNumber(of chunk: PNGChunk) -> UInt32? {
        chunk.type == "fcTL" || chunk.type == "fdAT" ? chunk.uint32(at: 0) : nil
    }

    /// A PNG file of one frame: the frame's size in `IHDR`, the file's colour chunks, its data.
    private func standalone(_ frame: StoredFrame) -> Data {
        var ihdr = header.data
        ihdr.replaceSubrange(
            0..<8, with: PNGChunk.bigEndian(UInt32(frame.control.width)) + PNGChunk.bigEndian(UInt32(frame.control.height)))
        var bytes = PNGChunk.signature + PNGChunk(type: "IHDR", data: ihdr).encoded
        for chunk in colourChunks { bytes += chunk.encoded }
        for data in frame.data { bytes += PNGChunk(type: "IDAT", data: data).encoded }
        bytes += PNGChunk(type: "IEND", data: []).encoded
        return Data(bytes)
    }

    /// Puts a frame on the canvas: replacing the region, or composited over it ("over" computed
    /// premultiplied: source plus destination times what the source leaves uncovered, divided
    /// back to straight; an opaque or transparent source pixel is copied or skipped exactly).
    /// `access` reads and writes the canvas's straight pixels, of 8 or 16 bits a sample.
    private mutating func draw<Access: PixelAccess>(_ pixels: PixelBuffer, at control: APNGFrameControl, access: Access.Type) {
        let (canvasWidth, size) = (canvasWidth, Access.bytesPerPixel)
        pixels.bytes.withUnsafeBytes { source in
            canvas.withUnsafeMutableBytes { target in
                for row in 0..<control.height {
                    let from = row * control.width * size
                    let to = ((control.y + row) * canvasWidth + control.x) * size
                    guard control.blend == .over else {
                        target.baseAddress!.advanced(by: to).copyMemory(from: source.baseAddress! + from, byteCount: control.width * size)
                        continue
                    }
                    for pixel in 0..<control.width {
                        let (s, d) = (source.baseAddress! + from + pixel * size, target.baseAddress! + to + pixel * size)
                        // The alpha sample's bytes (one, or a UInt16's two):
                        // all ones or all zeros mean opaque or clear.
                        let alpha = (s.load(fromByteOffset: size - 1, as: UInt8.self), s.load(fromByteOffset: size * 3 / 4, as: UInt8.self))
                        switch alpha {
                        case (0, 0): continue
                        case (255, 255): d.copyMemory(from: s, byteCount: size)
                        default:
                            let top = Access.load(s)
                            let bottom = Access.load(d)
                            Access.store(top + bottom * (1 - top[3] / 255), to: d.assumingMemoryBound(to: UInt8.self))
                        }
                    }
                }
            }
        }
    }

    private mutating func clear(_ control: APNGFrameControl) {
        let size = bytesPerPixel
        for row in 0..<control.height {
            let start = ((control.y + row) * canvasWidth + control.x) * size
            canvas.replaceSubrange(start..<(start + control.width * size), with: repeatElement(0, count: control.width * size))
        }
    }
}
