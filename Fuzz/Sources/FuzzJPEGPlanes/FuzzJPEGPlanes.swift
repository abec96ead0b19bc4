import Foundation
@testable import WebImageCodecs

/// libFuzzer entry point for the planar JPEG path (`JPEGPlanarResize`): the decode of only the
/// blocks a resize reads, by our own Huffman decoder (`JPEGEntropy.c`) inside libjpeg, then the
/// planes' resample and encode. Every input must end in a JPEG, nil (the general path's file)
/// or a WebImageError: a trap, a read past the input or a write past a plane is a finding.
let resizes = [
    JPEGPlanarResize(width: 64, height: 48, filter: .lanczos3),
    JPEGPlanarResize(width: 85, height: 64, window: ResizeWindow(x: 10, y: 0, width: 64, height: 64), filter: .bilinear),
    JPEGPlanarResize(width: 31, height: 23, window: ResizeWindow(x: 3, y: 5, width: 9, height: 7), filter: .lanczos3),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    let limits = DecodeLimits(maximumPixelCount: 4_000_000, maximumInputSize: 1 << 20)
    for resize in resizes { _ = try? resize.recompress(data, quality: 80, limits: limits) }
    return 0
}
