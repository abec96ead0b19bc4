import Foundation

/// Writes an animated ``Image`` as APNG: every frame whole (no cropping to changed regions),
/// replaced rather than blended, with its delay in milliseconds and the image's loop count; the
/// chunks the first frame's PNG has between `IHDR` and its data (`cICP`) once, for all frames.
enum APNGWriter {
    /// `encodeFrame` encodes one frame as a still PNG; every frame must use the same colour type.
    static func encode(_ image: Image, encodeFrame: (PixelBuffer) throws(WebImageError) -> Data) throws(WebImageError) -> Data {
        var output = PNGChunk.signature
        var sequence: UInt32 = 0
        for (index, frame) in image.frames.enumerated() {
            let encoded = try encodeFrame(frame.pixels)
            guard let chunks = encoded.withUnsafeBytes({ PNGChunk.chunks(in: $0) }), let header = chunks.first, header.type == "IHDR" else {
                throw WebImageError(.encodeFailed, "APNG: frame \(index) did not encode as PNG")
            }
            if index == 0 {
                output += header.encoded
                output +=
                    PNGChunk(
                        type: "acTL",
                        data: PNGChunk.bigEndian(UInt32(image.frames.count)) + PNGChunk.bigEndian(UInt32(max(0, image.loopCount)))
                    ).encoded
                // The first frame's colour chunks (a 16-bit frame's cICP) describe every frame.
                for chunk in chunks.dropFirst().prefix(while: { $0.type != "IDAT" }) { output += chunk.encoded }
            }
            let milliseconds = UInt16(
                clamping: frame.duration.components.seconds * 1000 + frame.duration.components.attoseconds / 1_000_000_000_000_000)
            let control = APNGFrameControl(
                width: image.pixelWidth, height: image.pixelHeight, delayNumerator: milliseconds, delayDenominator: 1000)
            output += control.chunk(sequence: sequence).encoded
            sequence += 1
            for data in chunks.filter({ $0.type == "IDAT" }).map(\.data) {
                if index == 0 {
                    output += PNGChunk(type: "IDAT", data: data).encoded
                } else {
                    output += PNGChunk(type: "fdAT", data: PNGChunk.bigEndian(sequence) + data).encoded
                    sequence += 1
                }
            }
        }
        output += PNGChunk(type: "IEND", data: []).encoded
        return Data(output)
    }
}
