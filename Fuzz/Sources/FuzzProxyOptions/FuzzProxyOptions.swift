import Foundation
import WebImage
@testable import WebImageServer

/// libFuzzer entry point for whole requests' processing: the bytes as option segments
/// (imgproxy's `name:args/...`), applied by `ImageProcessor` to small real sources of the shapes
/// that once made the process allocate hundreds of gigabytes (1x1, 1x400, 400x1, a translucent
/// 7x5 and a two-frame animation). Every input must end in a result within the limits or a
/// `ProxyError`: a trap, an allocation failure, or a peak over `-rss_limit_mb` is a finding.
let limits = ProcessingPlan.Limits(maximumDimension: 1024, maximumPixels: 250_000)
let parser = OptionsParser()
let processor = ImageProcessor(
    coders: .shared, maximumSourcePixels: 1_000_000, maximumAnimationFrames: 10, defaultQuality: 80, resultLimits: limits)

/// A `width` x `height` source whose pixels vary, as PNG (or a two-frame GIF).
func source(_ width: Int, _ height: Int, translucent: Bool = false, frames: Int = 1) -> Data {
    let made = (0..<frames).map { frame in
        var bytes: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                bytes += [UInt8((x * 7 + frame * 50) % 256), UInt8(y % 256), 90, translucent ? UInt8((x + y) % 256) : 255]
            }
        }
        return ImageFrame(pixels: PixelBuffer(width: width, height: height, straightRGBA: bytes), duration: .milliseconds(100))
    }
    var image = Image(pixels: made[0].pixels)
    image.frames = made
    return try! CodersManager.shared.encode(image, as: frames > 1 ? .gif : .png)
}

/// Kept as byte arrays: LeakSanitizer took a global array of `Data` made at start for a leak.
let sources = [source(1, 1), source(1, 400), source(400, 1), source(7, 5, translucent: true), source(6, 4, frames: 2)].map { [UInt8]($0) }

/// Makes the sources before the first input, so that libFuzzer does not count them as its leak.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
)
    -> CInt
{
    _ = sources.count
    _ = processor
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    guard let options = try? parser.parse(text.split(separator: "/")) else { return 0 }
    for (index, data) in sources.enumerated() {
        let format: ImageFormat = index == 4 ? .gif : .png
        guard let result = try? processor.process(Data(data), options: options, format: options.format ?? format) else { continue }
        let image = try! CodersManager.shared.decode(result)
        precondition(
            image.pixelWidth <= 1024 && image.pixelHeight <= 1024 && image.pixelWidth * image.pixelHeight * image.frames.count <= 250_000,
            "a \(image.pixelWidth)x\(image.pixelHeight)x\(image.frames.count) result for \(text)")
    }
    return 0
}
