import Foundation
import FuzzSupport
import WebImageCodecs

/// libFuzzer entry point for the PNG decoder (see ``fuzzDecoding(_:_:with:)``), and for the
/// writer: whatever decodes is written again at a level and interlacing the input's first byte
/// picks, and must read back with the same pixels (a palette when the image has few enough
/// colours, which keeps them exactly).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    fuzzDecoding(bytes, count, with: builtInCoder(for: .png))
    let data = Data(bytes: bytes, count: count)
    let limits = DecodeLimits(maximumPixelCount: 1_000_000, maximumInputSize: 1 << 20)
    guard count > 0, let image = try? builtInCoder(for: .png).decode(data, options: DecodeOptions(limits: limits, firstFrameOnly: true))
    else {
        return 0
    }
    var options = EncodeOptions()
    options.pngCompressionLevel = Int(bytes[0] % 10)
    options.pngInterlaced = bytes[0] & 0x10 != 0
    if bytes[0] & 0x20 != 0 { options.pngPaletteColors = 256 }
    let still = Image(pixels: image.pixels)
    guard let written = try? builtInCoder(for: .png).encode(still, as: .png, options: options) else {
        preconditionFailure("PNG writer refused")
    }
    guard let read = try? builtInCoder(for: .png).decode(written, options: DecodeOptions()) else {
        preconditionFailure("written PNG unreadable")
    }
    let colours = Set(stride(from: 0, to: image.pixels.bytes.count, by: 4).map { Array(image.pixels.bytes[$0..<$0 + 4]) }).count
    if options.pngPaletteColors == nil || colours <= 256 {
        precondition(read.pixels == image.pixels, "written PNG reads back different pixels")
    }
    return 0
}
