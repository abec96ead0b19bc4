package import Foundation
package import WebImageCore

/// Reshapes a video's frame as it is decoded (the frame in its stored orientation, with the
/// orientation that turns it upright); the result is held instead of the frame, as upright.
package typealias VideoFrameShaping = (Image) throws(WebImageError) -> Image

extension CodersManager {
    /// The frames `selection` takes from `data` (a video in `format`), each reshaped by `shaping`
    /// as it is decoded, so that only the reshaped frames are held (the proxy's tile sheets and
    /// animated previews of many frames): an animation of them, or a still of one.
    /// - Throws: `unsupportedFormat` in a build without the `Video` trait, else as ``VideoCoder``.
    package func videoFrames(
        _ data: Data, format: ImageFormat, selection: VideoFrameSelection, limits: DecodeLimits, shaping: @escaping VideoFrameShaping
    ) throws(WebImageError) -> Image {
        #if Video
        return try VideoDecoder(selection: selection, limits: limits, shaping: shaping).image(of: data, format: format)
        #else
        throw WebImageError(.unsupportedFormat, "this build reads no video (the package's Video trait is off)")
        #endif
    }
}
