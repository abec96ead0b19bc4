/// How an Ultra HDR JPEG's gain map turns its SDR base into the HDR rendition: the `hdrgm` values
/// of the gain map image's XMP (Adobe's gain map specification, as Android's Ultra HDR format
/// v1.0 and v1.1 carry them), as the file states them, or the same values from its ISO 21496-1
/// binary metadata (which libultrahdr 1.4 writes instead, and an AVIF or HEIF carries in its `tmap`
/// item). Gains and capacities are log2 values; a
/// value given once applies to red, green and blue alike (one element), or per channel (three).
public struct GainMapMetadata: Sendable, Hashable {
    /// `hdrgm:GainMapMin`: log2 of the smallest gain. Default 0.
    public var gainMapMin: [Double]
    /// `hdrgm:GainMapMax`: log2 of the largest gain (the content boost). Required.
    public var gainMapMax: [Double]
    /// `hdrgm:Gamma`: the gain map's encoding gamma. Default 1.
    public var gamma: [Double]
    /// `hdrgm:OffsetSDR`: added to the SDR rendition before the gain. Default 1/64.
    public var offsetSDR: [Double]
    /// `hdrgm:OffsetHDR`: added to the HDR rendition. Default 1/64.
    public var offsetHDR: [Double]
    /// `hdrgm:HDRCapacityMin`: log2 of the display headroom from which the gain map starts to
    /// apply. Default 0.
    public var hdrCapacityMin: Double
    /// `hdrgm:HDRCapacityMax`: log2 of the headroom at which it applies in full. Required.
    public var hdrCapacityMax: Double
    /// `hdrgm:BaseRenditionIsHDR`: whether the base image is the HDR rendition. Default false.
    public var baseRenditionIsHDR: Bool

    /// Metadata with the given values; the optional ones default as the specification says.
    public init(
        gainMapMin: [Double] = [0], gainMapMax: [Double], gamma: [Double] = [1], offsetSDR: [Double] = [1.0 / 64],
        offsetHDR: [Double] = [1.0 / 64], hdrCapacityMin: Double = 0, hdrCapacityMax: Double, baseRenditionIsHDR: Bool = false
    ) {
        self.gainMapMin = gainMapMin
        self.gainMapMax = gainMapMax
        self.gamma = gamma
        self.offsetSDR = offsetSDR
        self.offsetHDR = offsetHDR
        self.hdrCapacityMin = hdrCapacityMin
        self.hdrCapacityMax = hdrCapacityMax
        self.baseRenditionIsHDR = baseRenditionIsHDR
    }
}
