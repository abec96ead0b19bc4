import Foundation
import WebImageCodecs

/// libFuzzer entry point for the video coder (FFmpeg's demuxers and decoders behind a custom I/O
/// context): every input must give frames or a WebImageError, never a crash, a leak, a hang past
/// the time limit or an allocation past the limits, for each way frames are taken: the first
/// keyframe, a frame at a time (also kept at its high bit depth), keyframes only, several frames
/// a step apart, frames spread over the video.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    let limits = DecodeLimits(maximumPixelCount: 4_000_000, maximumInputSize: 1 << 20)
    let bounded = VideoFrameSelection(maximumDecodedFrames: 300, timeLimit: .seconds(5))
    var selections = [bounded, bounded, bounded, bounded, bounded]
    selections[1].second = 1.5
    (selections[2].second, selections[2].keyframesOnly) = (0.7, true)
    (selections[3].second, selections[3].count, selections[3].step) = (0.2, 3, 0.4)
    (selections[4].count, selections[4].step) = (4, -1)
    for (index, selection) in selections.enumerated() {
        var options = DecodeOptions(limits: limits)
        options.video = selection
        // The first frame also at its high bit depth: read at 16 bits and kept.
        options.keepsHighBitDepth = index == 1
        _ = try? VideoCoder().decode(data, options: options)
    }
    return 0
}
