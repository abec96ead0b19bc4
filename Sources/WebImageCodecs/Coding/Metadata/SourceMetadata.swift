import Foundation

/// The colour and EXIF metadata of an encoded image, read from its container without decoding
/// pixels: a JPEG's APP2 `ICC_PROFILE` segments (joined in sequence order) and APP1 EXIF, a PNG's
/// `iCCP`, `sRGB`, `gAMA`, `cHRM` and `eXIf` chunks, a WebP's `ICCP` and `EXIF` chunks, an AVIF's
/// `colr` profile (through libavif), a HEIF's `colr` profile (through libheif), the profile of a
/// JPEG XL's decoded pixels (through libjxl; none for lossy files, which decode to sRGB), a TIFF's
/// first page's `ICCProfile` tag (through libtiff).
/// Anything malformed is left out, never an error: browsers show such files as sRGB.
struct SourceMetadata {
    /// Where the pixels' colours are defined, when the file says.
    enum ColorSpace: Equatable {
        /// An embedded ICC profile.
        case icc(Data)
        /// A PNG's `gAMA` (and `cHRM`) chunks: the file's gamma (1/2.2 is 0.45455) and, when
        /// given, its white point and primaries as CIE xy.
        case pngChunks(gamma: Double, chromaticities: [Double]?)
    }

    /// The formats whose metadata is read.
    static let formats: Set<ImageFormat> = [.jpeg, .png, .webP, .avif, .heic, .heif, .jpegXL, .tiff]

    var colorSpace: ColorSpace?
    /// A JPEG's sample precision and whether it declares an Ultra HDR gain map (`hdrgm` XMP,
    /// Adobe's gain map specification, or ISO 21496-1's APP2) or carries Apple's (an appended
    /// image its Multi-Picture index lists); a PNG's bit depth and `cICP` chunk.
    var colorDescription: ColorDescription?
    /// TIFF-structured EXIF bytes (without JPEG's `Exif\0\0` prefix).
    var exif: Data?

    init(_ data: Data, format: ImageFormat) {
        data.withUnsafeBytes { bytes in readContainer(bytes, format: format) }
        let container = Self.containerColor(data, format: format)
        if let profile = container.profile { colorSpace = .icc(profile) }
        if colorDescription == nil { colorDescription = container.description }
    }

    /// What a JPEG's, PNG's or WebP's own chunks say, read in place (no codec library's
    /// container profile).
    init(container bytes: UnsafeRawBufferPointer, format: ImageFormat) {
        readContainer(bytes, format: format)
    }

    private mutating func readContainer(_ bytes: UnsafeRawBufferPointer, format: ImageFormat) {
        switch format {
        case .jpeg: readJPEG(bytes)
        case .png: readPNG(bytes)
        case .webP: readWebP(bytes)
        case .tiff: colorDescription = ExifReader.bitsPerSample(inTIFF: bytes).map { ColorDescription(bitDepth: $0) }
        default: break
        }
    }

    /// The EXIF's orientation, when it has one: a PNG's `eXIf` and a WebP's `EXIF` say it as a
    /// JPEG's APP1 does, and libvips (so imgproxy) turns such files upright too.
    var orientation: ExifOrientation? {
        exif?.withUnsafeBytes(ExifReader.orientation(inTIFF:))
    }

    /// The ICC profile and the colour description of a format whose codec library parses its
    /// container (no pixel decoding), each read once: libavif's profile, libheif's profile, luma
    /// bit depth and `nclx`, libtiff's profile, libjxl's profile of the pixels it will decode and
    /// its bits per sample and encoded colour.
    private static func containerColor(_ data: Data, format: ImageFormat) -> (profile: Data?, description: ColorDescription?) {
        switch format {
        case .avif: ((try? AVIFFrameSource.Decoder(data, limits: DecodeLimits()))?.colorProfile, nil)
        case .heic, .heif: HEIFCoder.containerColor(in: data)
        case .tiff: (TIFFCoder.colorProfile(in: data), nil)
        case .jpegXL: JXLDecoder.containerColor(in: data)
        default: (nil, nil)
        }
    }

    private mutating func readJPEG(_ bytes: UnsafeRawBufferPointer) {
        let iccSignature = Array("ICC_PROFILE".utf8) + [0]
        var pieces: [(sequence: UInt8, bytes: UnsafeRawBufferPointer)] = []
        var gainMap = false
        var multiPicture = false
        defer {
            if gainMap {
                let found = FoundGainMap(metadata: GainMapXMP.metadata(inFile: bytes) ?? GainMapISO.metadata(inFile: bytes))
                colorDescription = colorDescription?.noting(found)
            } else if multiPicture {
                colorDescription = colorDescription?.noting(Self.appleGainMap(in: bytes, exif: exif))
            }
        }
        JPEGSegments.forEach(in: bytes) { marker, segment in
            if marker == 0xE2, segment.count > 14, segment.prefix(12).elementsEqual(iccSignature) {
                pieces.append((segment[12], UnsafeRawBufferPointer(rebasing: segment[14...])))
            } else if marker == 0xE1, exif == nil, let tiff = ExifReader.tiff(inAPP1: segment) {
                exif = Data(tiff)
            } else if marker == 0xE1, Self.declaresGainMap(xmp: segment) {
                gainMap = true
            } else if marker == 0xE2, GainMapISO.isMetadata(segment) {
                gainMap = true
            } else if marker == 0xE2, MultiPictureIndex.isIndex(segment) {
                multiPicture = true
            } else if Self.startOfFrame.contains(marker), let precision = segment.first {
                colorDescription = ColorDescription(bitDepth: Int(precision))
            }
            return true
        }
        guard !pieces.isEmpty else { return }
        // Sequence numbers run from 1 and must each appear once, or the profile is unusable.
        let ordered = pieces.sorted { $0.sequence < $1.sequence }
        guard ordered.enumerated().allSatisfy({ Int($0.element.sequence) == $0.offset + 1 }) else { return }
        var profile = Data()
        for piece in ordered { profile.append(contentsOf: piece.bytes) }
        colorSpace = .icc(profile)
    }

    private mutating func readPNG(_ bytes: UnsafeRawBufferPointer) {
        var gamma: Double?
        var chromaticities: [Double]?
        var isSRGB = false
        PNGChunk.forEachBeforeImageData(in: bytes) { type, data in
            switch type {
            case "iCCP": if let profile = Self.inflatedProfile(data) { colorSpace = .icc(profile) }
            case "sRGB": isSRGB = true
            case "gAMA" where data.count == 4: gamma = Double(Self.bigEndian32(data, 0)) / 100_000
            case "cHRM" where data.count == 32: chromaticities = (0..<8).map { Double(Self.bigEndian32(data, $0 * 4)) / 100_000 }
            case "eXIf": exif = Data(data)
            default: PNGChunk.describe(&colorDescription, type: type, data: data)
            }
        }
        // cICP wins over every other chunk (PNG Third Edition, 4.3); a PQ or HLG one has been
        // tone-mapped to sRGB by the decoder, so nothing is left to convert.
        if colorDescription?.isHDR == true {
            colorSpace = nil
            return
        }
        // iCCP wins over the others; sRGB means no conversion; gAMA 1/2.2 without primaries is
        // how encoders label sRGB.
        guard colorSpace == nil, !isSRGB, let gamma, gamma > 0 else { return }
        guard chromaticities != nil || abs(gamma - 0.45455) > 0.0001 else { return }
        colorSpace = .pngChunks(gamma: gamma, chromaticities: chromaticities)
    }

    private mutating func readWebP(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 12, bytes.prefix(4).elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) else { return }
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = Int(Self.littleEndian32(bytes, offset + 4))
            guard size <= bytes.count - offset - 8 else { return }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(offset + 8)..<(offset + 8 + size)])
            switch String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self) {
            case "ICCP": colorSpace = .icc(Data(payload))
            case "EXIF": exif = Data(ExifReader.tiff(inAPP1: payload) ?? payload)
            default: break
            }
            offset += 8 + size + size % 2
        }
    }

    /// JPEG's start-of-frame markers (SOF0-SOF15 but DHT, JPG and DAC), whose first byte is the
    /// sample precision.
    private static let startOfFrame: Set<UInt8> = Set(0xC0...0xCF).subtracting([0xC4, 0xC8, 0xCC])

    /// An iPhone JPEG's gain map (``GainMapApple``), its headroom from the XMP or `exif`.
    private static func appleGainMap(in bytes: UnsafeRawBufferPointer, exif: Data?) -> FoundGainMap? {
        guard let exif else { return GainMapApple.find(inJPEG: bytes, exif: nil) }
        return exif.withUnsafeBytes { GainMapApple.find(inJPEG: bytes, exif: $0) }
    }

    /// Whether an APP1 segment is XMP that declares a gain map: Ultra HDR's primary image
    /// carries `hdrgm:Version` in the `http://ns.adobe.com/hdr-gain-map/1.0/` namespace.
    private static func declaresGainMap(xmp segment: UnsafeRawBufferPointer) -> Bool {
        let signature = GainMapXMP.signature
        guard segment.count > signature.count, segment.prefix(signature.count).elementsEqual(signature) else { return false }
        return segment.dropFirst(signature.count).firstRange(of: Array("http://ns.adobe.com/hdr-gain-map/1.0/".utf8)) != nil
    }

    /// An `iCCP` chunk's profile: a name of 1 to 79 bytes, a zero, compression method 0, then
    /// zlib data, inflated within 16 MB.
    private static func inflatedProfile(_ chunk: UnsafeRawBufferPointer) -> Data? {
        guard let nameEnd = chunk.prefix(80).firstIndex(of: 0), nameEnd > 0, nameEnd + 2 < chunk.count, chunk[nameEnd + 1] == 0 else {
            return nil
        }
        return Zlib.inflate(UnsafeRawBufferPointer(rebasing: chunk[(nameEnd + 2)...]), limit: 16 << 20)
    }

    private static func bigEndian32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func littleEndian32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}
