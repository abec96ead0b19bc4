public import Foundation

/// An image file format, recognised from the first bytes of the data.
///
/// Sniffing follows SDWebImage 5 (`NSData+ImageContentType`): the first byte picks the family
/// (`0xFF` JPEG, `0x89` PNG, `0x47` GIF, `0x49`/`0x4D` TIFF, `RIFF…WEBP` WebP, an ISO-BMFF
/// `ftyp` box for HEIC and HEIF, `%PDF`). SVG is recognised as imgproxy's `imagetype.IsSVG` does:
/// a document whose first element's local name is `svg` (`<svg …>`, `<svg:svg …>`), after an
/// optional byte order mark, white space, the XML declaration, processing instructions, comments
/// and a doctype, whether or not the rest has arrived.
/// It adds formats SDWebImage leaves out: AVIF (an `ftyp` box whose major or compatible brand is
/// `avif` or `avis`, checked before HEIF because AVIF files often carry the `mif1` major brand),
/// BMP (`BM`), ICO (`00 00 01 00`) and JPEG XL (the bare codestream `FF 0A`, checked before JPEG,
/// and the `JXL ` container box). A format is recognised whether or not a coder exists for it.
public enum ImageFormat: String, Sendable, CaseIterable, Codable {
    case jpeg
    case png
    case gif
    case tiff
    case webP = "webp"
    case heic
    case heif
    case pdf
    case svg
    case avif
    case bmp
    case ico
    case jpegXL = "jxl"
    /// An MP4 video (ISO base media with a video brand: `isom`, `mp41`, `mp42`, `avc1`...),
    /// decoded to its frames by ``VideoCoder`` in a build with the `Video` trait.
    case mp4
    /// A QuickTime movie (`ftyp` brand `qt  `), as phones record.
    case quickTime = "mov"
    /// A WebM video (Matroska with the `webm` document type).
    case webM = "webm"

    /// Whether the format is a video container, whose frames are taken as images.
    public var isVideo: Bool {
        self == .mp4 || self == .quickTime || self == .webM
    }

    /// Recognises the format of `bytes`, or returns nil when no known signature matches.
    public init?(sniffing bytes: some ContiguousBytes) {
        guard let format = bytes.withUnsafeBytes(ImageFormat.sniff) else { return nil }
        self = format
    }

    /// The format's registered MIME type.
    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .tiff: "image/tiff"
        case .webP: "image/webp"
        case .heic: "image/heic"
        case .heif: "image/heif"
        case .pdf: "application/pdf"
        case .svg: "image/svg+xml"
        case .avif: "image/avif"
        case .bmp: "image/bmp"
        case .ico: "image/x-icon"
        case .jpegXL: "image/jxl"
        case .mp4: "video/mp4"
        case .quickTime: "video/quicktime"
        case .webM: "video/webm"
        }
    }

    /// The file extensions for the format, the preferred one first, without the dot.
    public var fileExtensions: [String] {
        switch self {
        case .jpeg: ["jpg", "jpeg", "jpe", "jfif"]
        case .png: ["png", "apng"]
        case .gif: ["gif"]
        case .tiff: ["tiff", "tif"]
        case .webP: ["webp"]
        case .heic: ["heic"]
        case .heif: ["heif"]
        case .pdf: ["pdf"]
        case .svg: ["svg"]
        case .avif: ["avif"]
        case .bmp: ["bmp"]
        case .ico: ["ico", "cur"]
        case .jpegXL: ["jxl"]
        case .mp4: ["mp4", "m4v"]
        case .quickTime: ["mov", "qt"]
        case .webM: ["webm"]
        }
    }

    /// The preferred file extension, without the dot.
    public var preferredFileExtension: String { fileExtensions[0] }

    /// The format for a MIME type such as `image/jpeg; charset=binary`, ignoring case and
    /// parameters; nil for a type that names no image format.
    public init?(mimeType: String) {
        let essence =
            mimeType.split(separator: ";", maxSplits: 1).first.map {
                $0.trimmingASCIIWhitespace().lowercased()
            } ?? ""
        let aliases: [String: ImageFormat] = [
            "image/jpg": .jpeg, "image/pjpeg": .jpeg, "image/x-png": .png, "image/apng": .png,
            "image/vnd.microsoft.icon": .ico, "image/x-ms-bmp": .bmp, "image/heic-sequence": .heic,
            "image/heif-sequence": .heif,
        ]
        guard let format = ImageFormat.allCases.first(where: { $0.mimeType == essence }) ?? aliases[essence] else {
            return nil
        }
        self = format
    }

    /// The format for a file extension (with or without the dot, any case).
    public init?(fileExtension: String) {
        let bare = fileExtension.hasPrefix(".") ? String(fileExtension.dropFirst()) : fileExtension
        let lowered = bare.lowercased()
        guard let format = ImageFormat.allCases.first(where: { $0.fileExtensions.contains(lowered) }) else {
            return nil
        }
        self = format
    }

    private static func sniff(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        guard let first = bytes.first else { return nil }
        if first == 0x3C || first == 0xEF || first == 0x20 || first == 0x09 || first == 0x0A || first == 0x0D {
            return SVGSniffer.startsWithSVGElement(bytes) ? .svg : nil
        }
        switch first {
        case 0xFF:
            return bytes.count >= 2 && bytes[1] == 0x0A ? .jpegXL : .jpeg
        case 0x89: return .png
        case 0x47: return .gif
        case 0x49: return .tiff
        case 0x4D: return .tiff
        case 0x52: return matches(bytes, "RIFF", at: 0) && matches(bytes, "WEBP", at: 8) ? .webP : nil
        case 0x00: return sniffBox(bytes)
        case 0x25: return matches(bytes, "%PDF", at: 0) ? .pdf : nil
        case 0x42: return bytes.count >= 2 && bytes[1] == 0x4D ? .bmp : nil
        case 0x1A: return isWebM(bytes) ? .webM : nil
        default: return nil
        }
    }

    private static let avifBrands: [StaticString] = ["avif", "avis"]
    private static let heicBrands: [StaticString] = ["heic", "heix", "hevc", "hevx"]
    private static let heifBrands: [StaticString] = ["mif1", "msf1"]

    /// Formats whose data starts with a zero byte: ICO, and the ISO-BMFF family (HEIC, HEIF,
    /// AVIF, the JPEG XL container), whose first box is `ftyp` or `JXL `.
    private static func sniffBox(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        if bytes.count >= 4, bytes[1] == 0, bytes[2] == 1, bytes[3] == 0 { return .ico }
        if matches(bytes, "JXL ", at: 4) { return .jpegXL }
        guard matches(bytes, "ftyp", at: 4), bytes.count >= 12 else { return nil }
        let boxSize = min(Int(bytes[3]) | Int(bytes[2]) << 8, bytes.count)
        // The major brand sits at 8; the compatible brands follow the minor version, from 16.
        func hasBrand(_ brands: [StaticString]) -> Bool {
            var offset = 8
            while offset + 4 <= boxSize {
                if brands.contains(where: { matches(bytes, $0, at: offset) }) { return true }
                offset = offset == 8 ? 16 : offset + 4
            }
            return false
        }
        if hasBrand(avifBrands) { return .avif }
        if heicBrands.contains(where: { matches(bytes, $0, at: 8) }) { return .heic }
        if heifBrands.contains(where: { matches(bytes, $0, at: 8) }) { return .heif }
        if matches(bytes, "qt  ", at: 8) { return .quickTime }
        if videoBrands.contains(where: { matches(bytes, $0, at: 8) }) { return .mp4 }
        return nil
    }

    /// Major brands of MP4 files (ISO/IEC 14496-12 and -14, and the ones encoders and phones write).
    private static let videoBrands: [StaticString] = [
        "isom", "iso2", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "dash", "M4V ", "M4VH", "M4VP", "mmp4", "MSNV", "3gp4", "3gp5",
        "3gp6", "3g2a",
    ]

    /// An EBML header (`1A 45 DF A3`) whose document type, in its first bytes, is `webm`.
    private static func isWebM(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 8, bytes[1] == 0x45, bytes[2] == 0xDF, bytes[3] == 0xA3 else { return false }
        // The DocType element (42 82, a one-byte size 0x84) and its value.
        let header = bytes.prefix(64)
        for offset in 4..<max(4, header.count - 6) where header[offset] == 0x42 && header[offset + 1] == 0x82 {
            return matches(bytes, "webm", at: offset + 3)
        }
        return false
    }

    private static func matches(_ bytes: UnsafeRawBufferPointer, _ ascii: StaticString, at offset: Int) -> Bool {
        let length = ascii.utf8CodeUnitCount
        guard bytes.count >= offset + length else { return false }
        let pattern = UnsafeRawBufferPointer(start: ascii.utf8Start, count: length)
        return memcmp(bytes.baseAddress! + offset, pattern.baseAddress!, length) == 0
    }
}
