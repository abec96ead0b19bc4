/// How to decode: limits, and the SDWebImage decode options that apply to a coder.
public struct DecodeOptions: Sendable, Equatable {
    /// Bounds checked before any pixel memory is allocated.
    public var limits: DecodeLimits
    /// Decode at about this size, through the codec's own scaling where it has one (JPEG's DCT
    /// scaling); nil decodes at full size.
    public var thumbnail: CacheKey.Thumbnail?
    /// Decode only the first frame of an animation.
    public var firstFrameOnly: Bool
    /// The scale to give the image.
    public var scale: Double

    /// Creates options; the defaults decode everything at full size with the default limits.
    public init(limits: DecodeLimits = DecodeLimits(), thumbnail: CacheKey.Thumbnail? = nil, firstFrameOnly: Bool = false, scale: Double = 1) {
        self.limits = limits
        self.thumbnail = thumbnail
        self.firstFrameOnly = firstFrameOnly
        self.scale = scale
    }
}
