/// How a file describes its pixels' colour: the bit depth of its samples and, where the format
/// signals them, the coding-independent code points of ITU-T H.273 (colour primaries, transfer
/// characteristics, matrix coefficients, as AVIF's and HEIF's `nclx`, PNG's `cICP`, JPEG XL's
/// encoded colour and video streams carry them), and whether it carries an HDR gain map.
///
/// It describes the source, not the decoded pixels, which are 8-bit sRGB: an HDR source
/// (``isHDR``) is tone-mapped to them, and a gain-map image is its SDR base.
public struct ColorDescription: Sendable, Hashable {
    /// Bits per sample as stored: 8, 10, 12 or 16 (1, 2 and 4 for a PNG's palette or grey).
    public var bitDepth: Int
    /// H.273 ColourPrimaries (1 BT.709/sRGB, 9 BT.2020, 12 Display P3); nil when not signalled.
    public var primaries: Int?
    /// H.273 TransferCharacteristics (13 sRGB, 16 PQ, 18 HLG); nil when not signalled.
    public var transfer: Int?
    /// H.273 MatrixCoefficients (0 identity/RGB, 1 BT.709, 6 BT.601, 9 BT.2020); nil when not
    /// signalled.
    public var matrix: Int?
    /// Whether the file carries a gain map (an Ultra HDR JPEG's `hdrgm` or ISO 21496-1 metadata, an
    /// AVIF's or HEIF's ISO 21496-1 `tmap` item, an iPhone JPEG's or HEIC's Apple gain map).
    public var hasGainMap: Bool
    /// The gain map's metadata values, when the file states them readably (an Ultra HDR JPEG's
    /// gain map image's XMP, else its ISO 21496-1 metadata; an AVIF's or HEIF's `tmap` item's; an
    /// iPhone JPEG's or HEIC's Apple headroom, as libavif turns it into these values).
    public var gainMap: GainMapMetadata?
    /// The brightest light the content holds, in cd/m², as the file states it: a video's content
    /// light level (HDR10's MaxCLL), else its mastering display's peak luminance; nil when it
    /// states neither. A PQ picture is tone-mapped from this peak rather than from its brightest
    /// pixel, as players do.
    public var peakLuminance: Int?

    /// A description; the code points nil where the file does not signal them.
    public init(
        bitDepth: Int, primaries: Int? = nil, transfer: Int? = nil, matrix: Int? = nil, hasGainMap: Bool = false,
        gainMap: GainMapMetadata? = nil, peakLuminance: Int? = nil
    ) {
        self.bitDepth = bitDepth
        self.primaries = primaries
        self.transfer = transfer
        self.matrix = matrix
        self.hasGainMap = hasGainMap || gainMap != nil
        self.gainMap = gainMap
        self.peakLuminance = peakLuminance
    }

    /// H.273's transfer characteristics for PQ (SMPTE ST 2084).
    public static let perceptualQuantizer = 16
    /// H.273's transfer characteristics for HLG (ARIB STD-B67).
    public static let hybridLogGamma = 18

    /// Whether the transfer is an HDR one (PQ or HLG).
    public var isHDR: Bool { transfer == Self.perceptualQuantizer || transfer == Self.hybridLogGamma }

    /// The transfer's short name (`srgb`, `bt709`, `pq`, `hlg`, `linear`), or its code point.
    public var transferName: String? {
        transfer.map { Self.transferNames[$0] ?? String($0) }
    }

    /// The primaries' short name (`bt709`, `bt2020`, `p3`), or the code point.
    public var primariesName: String? {
        primaries.map { Self.primariesNames[$0] ?? String($0) }
    }

    private static let transferNames = [
        1: "bt709", 4: "gamma22", 5: "gamma28", 6: "bt601", 8: "linear", 13: "srgb", 14: "bt2020", 15: "bt2020", 16: "pq",
        18: "hlg",
    ]
    private static let primariesNames = [1: "bt709", 5: "bt601", 6: "bt601", 9: "bt2020", 11: "p3-dci", 12: "p3"]
}
