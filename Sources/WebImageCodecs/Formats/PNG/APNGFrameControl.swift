/// An APNG `fcTL` chunk: where a frame goes on the canvas, how long it shows, and how it is
/// disposed of and blended.
struct APNGFrameControl: Equatable {
    enum Dispose: UInt8 {
        case none = 0
        case background = 1
        case previous = 2
    }

    enum Blend: UInt8 {
        case source = 0
        case over = 1
    }

    var width: Int
    var height: Int
    var x: Int
    var y: Int
    var delayNumerator: UInt16
    var delayDenominator: UInt16
    var dispose: Dispose
    var blend: Blend

    init(
        width: Int, height: Int, x: Int = 0, y: Int = 0, delayNumerator: UInt16, delayDenominator: UInt16,
        dispose: Dispose = .none, blend: Blend = .source
    ) {
        self.width = width
        self.height = height
        self.x = x
        self.y = y
        self.delayNumerator = delayNumerator
        self.delayDenominator = delayDenominator
        self.dispose = dispose
        self.blend = blend
    }

    /// Parses the chunk's 26 bytes; nil when short or with unknown operations.
    init?(_ chunk: PNGChunk) {
        guard chunk.data.count >= 26, let width = chunk.uint32(at: 4), let height = chunk.uint32(at: 8), let x = chunk.uint32(at: 12),
            let y = chunk.uint32(at: 16), let numerator = chunk.uint16(at: 20), let denominator = chunk.uint16(at: 22),
            let dispose = Dispose(rawValue: chunk.data[24]), let blend = Blend(rawValue: chunk.data[25])
        else { return nil }
        self.init(
            width: Int(width), height: Int(height), x: Int(x), y: Int(y), delayNumerator: numerator,
            delayDenominator: denominator, dispose: dispose, blend: blend)
    }

    /// The frame's duration, with the rule SDWebImage applies to every animation: a delay under
    /// 11 ms shows for 100 ms. A zero denominator means hundredths, as the APNG spec says.
    var duration: Duration {
        let milliseconds = Int(delayNumerator) * 1000 / Int(delayDenominator == 0 ? 100 : delayDenominator)
        return milliseconds < 11 ? .milliseconds(100) : .milliseconds(milliseconds)
    }

    /// The chunk with `sequence` as its sequence number.
    func chunk(sequence: UInt32) -> PNGChunk {
        var data = PNGChunk.bigEndian(sequence) + PNGChunk.bigEndian(UInt32(width)) + PNGChunk.bigEndian(UInt32(height))
        data += PNGChunk.bigEndian(UInt32(x)) + PNGChunk.bigEndian(UInt32(y))
        data += PNGChunk.bigEndian16(delayNumerator) + PNGChunk.bigEndian16(delayDenominator) + [dispose.rawValue, blend.rawValue]
        return PNGChunk(type: "fcTL", data: data)
    }
}
