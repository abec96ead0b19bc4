package import Foundation

/// An image's EXIF tags as exifread (`process_file(f, details=False)`) names and prints them:
/// `[("Image Make", "Canon"), ("EXIF ExposureTime", "1/100"), ...]`. img2dataset's `exif` field
/// (`webimage prefetch`) and the `exif` of `/info` are written from it.
///
/// Names are `IFD Tag`, the IFD being `Image` (IFD0), `Thumbnail` (IFD1), `EXIF`, `GPS` and
/// `Interoperability`, in exifread's order (IFD0 with its GPS directory inline, IFD1, then the EXIF
/// directory with its interoperability directory inline); a tag without a name here is
/// `Tag 0xXXXX`. Values print as exifread prints them: text up to its first NUL, a number, a
/// ratio in lowest terms (`1/100`, `72`), a list in brackets (cut after 20 values when there are
/// more than 50), enumerations by their names. The maker note, user comment and XMP are left out,
/// as `details=False` leaves them.
package enum ExifDump {
    /// The tags of an image's bytes: nil when the format is not one exifread reads (GIF, AVIF,
    /// JPEG XL, SVG...), empty when it carries no EXIF.
    package static func tags(of data: Data) -> [(String, String)]? {
        let bytes = [UInt8](data)
        guard let tiff = tiffBlock(in: bytes) else { return nil }
        return tiff.isEmpty ? [] : dump(tiff)
    }

    /// The TIFF structure holding the EXIF: empty when the format is known but has none; nil for
    /// a format exifread does not read.
    package static func tiffBlock(in bytes: [UInt8]) -> ArraySlice<UInt8>? {
        switch ImageFormat(sniffing: bytes) {
        case .jpeg?: return jpegExif(bytes) ?? []
        case .png?: return chunk(in: bytes, from: 8, type: "eXIf", lengthFirst: true, bigEndian: true) ?? []
        case .webP?: return chunk(in: bytes, from: 12, type: "EXIF", lengthFirst: false, bigEndian: false) ?? []
        case .tiff?: return bytes[...]
        default: return nil
        }
    }

    private static func jpegExif(_ bytes: [UInt8]) -> ArraySlice<UInt8>? {
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if marker == 0xDA || marker == 0xD9 { return nil }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let body = offset + 4
            guard length >= 2, body + length - 2 <= bytes.count else { return nil }
            if marker == 0xE1, length >= 8, Array(bytes[body..<body + 6]) == Array("Exif\0\0".utf8) {
                return bytes[(body + 6)..<(body + length - 2)]
            }
            offset = body + length - 2
        }
        return nil
    }

    /// A PNG or RIFF chunk's data; an `Exif\0\0` prefix some writers put first is skipped.
    private static func chunk(in bytes: [UInt8], from start: Int, type: String, lengthFirst: Bool, bigEndian: Bool) -> ArraySlice<UInt8>? {
        var offset = start
        let wanted = Array(type.utf8)
        while offset + 8 <= bytes.count {
            let lengthBytes = lengthFirst ? bytes[offset..<offset + 4] : bytes[offset + 4..<offset + 8]
            let typeBytes = lengthFirst ? bytes[offset + 4..<offset + 8] : bytes[offset..<offset + 4]
            let length = lengthBytes.reduce(0) { $0 << 8 | Int($1) }
            let size = bigEndian ? length : lengthBytes.reversed().reduce(0) { $0 << 8 | Int($1) }
            let body = offset + 8
            guard size >= 0, body + size <= bytes.count else { return nil }
            if Array(typeBytes) == wanted {
                let data = bytes[body..<body + size]
                return data.starts(with: Array("Exif\0\0".utf8)) ? data.dropFirst(6) : data
            }
            offset = body + size + (lengthFirst ? 4 : size % 2)
        }
        return nil
    }

    // MARK: - Reading the TIFF structure

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        let little: Bool

        func integer(_ offset: Int, _ length: Int, signed: Bool = false) -> Int? {
            guard offset >= 0, length > 0, offset + length <= bytes.count else { return nil }
            let base = bytes.startIndex + offset
            var value = 0
            for index in 0..<length { value = value << 8 | Int(bytes[base + (little ? length - 1 - index : index)]) }
            if signed, value >= 1 << (length * 8 - 1) { value -= 1 << (length * 8) }
            return value
        }
    }

    /// The tags, in exifread's order. A broken directory ends the reading there, keeping what was read.
    package static func dump(_ tiff: ArraySlice<UInt8>) -> [(String, String)] {
        guard tiff.count >= 8 else { return [] }
        let order = Array(tiff.prefix(2))
        guard order == [0x49, 0x49] || order == [0x4D, 0x4D] else { return [] }
        let reader = Reader(bytes: tiff, little: order == [0x49, 0x49])
        var tags: [(String, String)] = []
        var visited: Set<Int> = []
        var next = reader.integer(4, 4) ?? 0
        var index = 0
        // IFD0, IFD1 and any more in their chain (a loop in the chain ends it).
        while next > 0, index < 16, visited.insert(next).inserted {
            let name = index == 0 ? "Image" : index == 1 ? "Thumbnail" : "IFD \(index)"
            next = directory(at: next, name: name, table: .main, reader: reader, into: &tags, visited: &visited)
            index += 1
        }
        if let exif = tags.first(where: { $0.0 == "Image ExifOffset" }).flatMap({ Int($0.1) }), visited.insert(exif).inserted {
            _ = directory(at: exif, name: "EXIF", table: .main, reader: reader, into: &tags, visited: &visited)
        }
        return tags
    }

    private enum Table { case main, gps, interoperability }

    /// Reads one directory into `tags`; returns the offset of the next one (0 for none).
    private static func directory(
        at offset: Int, name: String, table: Table, reader: Reader, into tags: inout [(String, String)], visited: inout Set<Int>
    ) -> Int {
        guard let count = reader.integer(offset, 2) else { return 0 }
        for entry in 0..<count {
            let position = offset + 2 + 12 * entry
            guard let tag = reader.integer(position, 2), let type = reader.integer(position + 2, 2),
                let valueCount = reader.integer(position + 4, 4)
            else { return 0 }
            if table == .main, [0x02BC, 0x927C, 0x9286].contains(tag) { continue }
            guard let size = typeSizes[type] else { continue }
            let (tagName, meaning) = names(table)[tag] ?? (String(format: "Tag 0x%04X", tag), nil)
            var valueOffset = position + 8
            if valueCount * size > 4 { valueOffset = reader.integer(valueOffset, 4) ?? -1 }
            let printable = printed(type: type, count: valueCount, size: size, at: valueOffset, reader: reader, meaning: meaning)
            if table == .main, tag == 0x8825 || tag == 0xA005, let target = reader.integer(valueOffset, 4), visited.insert(target).inserted
            {
                _ = directory(
                    at: target, name: tag == 0x8825 ? "GPS" : "Interoperability", table: tag == 0x8825 ? .gps : .interoperability,
                    reader: reader, into: &tags, visited: &visited)
            }
            tags.append(("\(name) \(tagName)", printable.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        return reader.integer(offset + 2 + 12 * count, 4) ?? 0
    }

    /// Bytes per value of each TIFF field type.
    private static let typeSizes: [Int: Int] = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8]

    private static func printed(type: Int, count: Int, size: Int, at offset: Int, reader: Reader, meaning: Meaning?) -> String {
        if type == 2 {
            var text: [UInt8] = []
            for index in 0..<count {
                guard let byte = reader.integer(offset + index, 1), byte != 0 else { break }
                text.append(UInt8(byte))
            }
            return String(decoding: text, as: UTF8.self)
        }
        let signed = [6, 8, 9, 10].contains(type)
        var values: [Value] = []
        if count < 1000 {
            for index in 0..<count {
                let at = offset + index * size
                switch type {
                case 5, 10:
                    guard let numerator = reader.integer(at, 4, signed: signed), let denominator = reader.integer(at + 4, 4, signed: signed)
                    else { break }
                    values.append(.ratio(numerator, denominator))
                case 11:
                    guard let bits = reader.integer(at, 4) else { break }
                    values.append(.real(Double(Float(bitPattern: UInt32(bits)))))
                case 12:
                    guard let bits = reader.integer(at, 8) else { break }
                    values.append(.real(Double(bitPattern: UInt64(UInt(bitPattern: bits)))))
                default:
                    guard let value = reader.integer(at, size, signed: signed) else { break }
                    values.append(.integer(value))
                }
            }
        }
        switch meaning {
        case .names(let names)?:
            return values.map { value in
                if case .integer(let number) = value { return names[number] ?? String(number) }
                return value.text
            }.joined()
        case .text?:
            let characters = values.compactMap { value -> Character? in
                guard case .integer(let number) = value, (32..<256).contains(number) else { return nil }
                return Character(Unicode.Scalar(UInt8(number)))
            }
            if !characters.isEmpty { return String(characters) }
            let digits = values.map(\.text).joined()
            return Set(digits) == ["0"] ? "" : digits
        case nil:
            if count == 1, let first = values.first { return first.text }
            if count > 50, values.count > 20 { return "[" + values.prefix(20).map(\.text).joined(separator: ", ") + ", ... ]" }
            return "[" + values.map(\.text).joined(separator: ", ") + "]"
        }
    }

    private enum Value {
        case integer(Int)
        case ratio(Int, Int)
        case real(Double)

        /// As Python prints it: a ratio in lowest terms (Fraction), a float inside a one-element tuple.
        var text: String {
            switch self {
            case .integer(let value): return String(value)
            case .ratio(let numerator, let denominator):
                guard denominator != 0 else { return "\(numerator)/\(denominator)" }
                var (n, d) = (numerator, denominator)
                if d < 0 { (n, d) = (-n, -d) }
                let divisor = gcd(abs(n), d)
                (n, d) = (n / divisor, d / divisor)
                return d == 1 ? String(n) : "\(n)/\(d)"
            case .real(let value): return "(\(value),)"
            }
        }

        private func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? max(a, 1) : gcd(b, a % b) }
    }

    /// How a tag's values are shown: by name, or as text from byte values (version tags).
    private enum Meaning {
        case names([Int: String])
        case text
    }

    private static func names(_ table: Table) -> [Int: (String, Meaning?)] {
        switch table {
        case .main: mainTags
        case .gps: gpsTags
        case .interoperability: interoperabilityTags
        }
    }

    private static let interoperabilityTags: [Int: (String, Meaning?)] = [
        0x0001: ("InteroperabilityIndex", nil), 0x0002: ("InteroperabilityVersion", nil), 0x1000: ("RelatedImageFileFormat", nil),
        0x1001: ("RelatedImageWidth", nil), 0x1002: ("RelatedImageLength", nil),
    ]

    private static let gpsTags: [Int: (String, Meaning?)] = {
        let names = [
            "GPSVersionID", "GPSLatitudeRef", "GPSLatitude", "GPSLongitudeRef", "GPSLongitude", "GPSAltitudeRef", "GPSAltitude",
            "GPSTimeStamp", "GPSSatellites", "GPSStatus", "GPSMeasureMode", "GPSDOP", "GPSSpeedRef", "GPSSpeed", "GPSTrackRef",
            "GPSTrack", "GPSImgDirectionRef", "GPSImgDirection", "GPSMapDatum", "GPSDestLatitudeRef", "GPSDestLatitude",
            "GPSDestLongitudeRef", "GPSDestLongitude", "GPSDestBearingRef", "GPSDestBearing", "GPSDestDistanceRef",
            "GPSDestDistance", "GPSProcessingMethod", "GPSAreaInformation", "GPSDate", "GPSDifferential",
        ]
        return Dictionary(uniqueKeysWithValues: names.enumerated().map { ($0.offset, ($0.element, nil)) })
    }()

    /// TIFF, EXIF 2.32 and common private tags, by their specs' names (exifread's spelling); the
    /// enumerations img2dataset's records show by name.
    private static let mainTags: [Int: (String, Meaning?)] = {
        var tags: [Int: (String, Meaning?)] = [:]
        let plain: [(Int, String)] = [
            (0x00FE, "SubfileType"), (0x00FF, "OldSubfileType"), (0x0100, "ImageWidth"), (0x0101, "ImageLength"),
            (0x0102, "BitsPerSample"), (0x0106, "PhotometricInterpretation"), (0x010A, "FillOrder"), (0x010D, "DocumentName"),
            (0x010E, "ImageDescription"), (0x010F, "Make"), (0x0110, "Model"), (0x0111, "StripOffsets"), (0x0115, "SamplesPerPixel"),
            (0x0116, "RowsPerStrip"), (0x0117, "StripByteCounts"), (0x011A, "XResolution"), (0x011B, "YResolution"),
            (0x011C, "PlanarConfiguration"), (0x0129, "PageNumber"), (0x012D, "TransferFunction"), (0x0131, "Software"),
            (0x0132, "DateTime"), (0x013B, "Artist"), (0x013C, "HostComputer"), (0x013D, "Predictor"), (0x013E, "WhitePoint"),
            (0x013F, "PrimaryChromaticities"), (0x0142, "TileWidth"), (0x0143, "TileLength"), (0x0144, "TileOffsets"),
            (0x0145, "TileByteCounts"), (0x014A, "SubIFDs"), (0x0152, "ExtraSamples"), (0x0153, "SampleFormat"),
            (0x0201, "JPEGInterchangeFormat"), (0x0202, "JPEGInterchangeFormatLength"), (0x0211, "YCbCrCoefficients"),
            (0x0212, "YCbCrSubSampling"), (0x0214, "ReferenceBlackWhite"), (0x4746, "Rating"), (0x8298, "Copyright"),
            (0x829A, "ExposureTime"), (0x829D, "FNumber"), (0x8769, "ExifOffset"), (0x8773, "InterColorProfile"),
            (0x8824, "SpectralSensitivity"), (0x8825, "GPSInfo"), (0x8827, "ISOSpeedRatings"), (0x8828, "OECF"),
            (0x8830, "SensitivityType"), (0x8832, "RecommendedExposureIndex"), (0x8833, "ISOSpeed"), (0x9003, "DateTimeOriginal"),
            (0x9004, "DateTimeDigitized"), (0x9010, "OffsetTime"), (0x9011, "OffsetTimeOriginal"), (0x9012, "OffsetTimeDigitized"),
            (0x9102, "CompressedBitsPerPixel"), (0x9201, "ShutterSpeedValue"), (0x9202, "ApertureValue"),
            (0x9203, "BrightnessValue"), (0x9204, "ExposureBiasValue"), (0x9205, "MaxApertureValue"), (0x9206, "SubjectDistance"),
            (0x920A, "FocalLength"), (0x920B, "FlashEnergy"), (0x9211, "ImageNumber"), (0x9214, "SubjectArea"),
            (0x9215, "ExposureIndex"), (0x9290, "SubSecTime"), (0x9291, "SubSecTimeOriginal"), (0x9292, "SubSecTimeDigitized"),
            (0x9C9B, "XPTitle"), (0x9C9C, "XPComment"), (0x9C9E, "XPKeywords"), (0x9C9F, "XPSubject"), (0xA002, "ExifImageWidth"),
            (0xA003, "ExifImageLength"), (0xA004, "RelatedSoundFile"), (0xA005, "InteroperabilityOffset"),
            (0xA20B, "FlashEnergy"), (0xA20E, "FocalPlaneXResolution"), (0xA20F, "FocalPlaneYResolution"),
            (0xA210, "FocalPlaneResolutionUnit"), (0xA214, "SubjectLocation"), (0xA215, "ExposureIndex"), (0xA300, "FileSource"),
            (0xA301, "SceneType"), (0xA302, "CVAPattern"), (0xA404, "DigitalZoomRatio"), (0xA405, "FocalLengthIn35mmFilm"),
            (0xA40B, "DeviceSettingDescription"), (0xA40C, "SubjectDistanceRange"), (0xA420, "ImageUniqueID"),
            (0xA430, "CameraOwnerName"), (0xA431, "BodySerialNumber"), (0xA432, "LensSpecification"), (0xA433, "LensMake"),
            (0xA434, "LensModel"), (0xA435, "LensSerialNumber"), (0xA500, "Gamma"), (0xC4A5, "PrintIM"), (0xEA1C, "Padding"),
            (0xEA1D, "OffsetSchema"),
        ]
        for (tag, name) in plain { tags[tag] = (name, nil) }
        for (tag, name) in [(0x011D, "PageName"), (0x9000, "ExifVersion"), (0x9C9D, "XPAuthor"), (0xA000, "FlashPixVersion")] {
            tags[tag] = (name, .text)
        }
        let normal = [0: "Normal", 1: "Soft", 2: "Hard"]
        let named: [(Int, String, [Int: String])] = [
            (
                0x0103, "Compression",
                [1: "Uncompressed", 5: "LZW", 6: "JPEG (old-style)", 7: "JPEG", 8: "Adobe Deflate", 32773: "PackBits", 32946: "Deflate"]
            ),
            (
                0x0112, "Orientation",
                [
                    1: "Horizontal (normal)", 2: "Mirrored horizontal", 3: "Rotated 180", 4: "Mirrored vertical",
                    5: "Mirrored horizontal then rotated 90 CCW", 6: "Rotated 90 CW", 7: "Mirrored horizontal then rotated 90 CW",
                    8: "Rotated 90 CCW",
                ]
            ),
            (0x0128, "ResolutionUnit", [1: "Not Absolute", 2: "Pixels/Inch", 3: "Pixels/Centimeter"]),
            (0x0213, "YCbCrPositioning", [1: "Centered", 2: "Co-sited"]),
            (
                0x8822, "ExposureProgram",
                [
                    0: "Unidentified", 1: "Manual", 2: "Program Normal", 3: "Aperture Priority", 4: "Shutter Priority",
                    5: "Program Creative", 6: "Program Action", 7: "Portrait Mode", 8: "Landscape Mode",
                ]
            ),
            (
                0x9207, "MeteringMode",
                [
                    0: "Unidentified", 1: "Average", 2: "CenterWeightedAverage", 3: "Spot", 4: "MultiSpot", 5: "Pattern", 6: "Partial",
                    255: "other",
                ]
            ),
            (
                0x9208, "LightSource",
                [
                    0: "Unknown", 1: "Daylight", 2: "Fluorescent", 3: "Tungsten (incandescent light)", 4: "Flash", 9: "Fine weather",
                    10: "Cloudy weather", 11: "Shade",
                ]
            ),
            (
                0x9209, "Flash",
                [
                    0: "Flash did not fire", 1: "Flash fired", 5: "Strobe return light not detected", 7: "Strobe return light detected",
                    9: "Flash fired, compulsory flash mode", 16: "Flash did not fire, compulsory flash mode",
                    24: "Flash did not fire, auto mode",
                    25: "Flash fired, auto mode", 32: "No flash function",
                ]
            ),
            (0x9101, "ComponentsConfiguration", [0: "", 1: "Y", 2: "Cb", 3: "Cr", 4: "Red", 5: "Green", 6: "Blue"]),
            (0xA001, "ColorSpace", [1: "sRGB", 2: "Adobe RGB", 65535: "Uncalibrated"]),
            (
                0xA217, "SensingMethod",
                [
                    1: "Not defined", 2: "One-chip color area", 3: "Two-chip color area", 4: "Three-chip color area",
                    5: "Color sequential area", 7: "Trilinear", 8: "Color sequential linear",
                ]
            ),
            (0xA401, "CustomRendered", [0: "Normal", 1: "Custom"]),
            (0xA402, "ExposureMode", [0: "Auto Exposure", 1: "Manual Exposure", 2: "Auto Bracket"]),
            (0xA403, "WhiteBalance", [0: "Auto", 1: "Manual"]),
            (0xA406, "SceneCaptureType", [0: "Standard", 1: "Landscape", 2: "Portrait", 3: "Night"]),
            (0xA407, "GainControl", [0: "None", 1: "Low gain up", 2: "High gain up", 3: "Low gain down", 4: "High gain down"]),
            (0xA408, "Contrast", normal), (0xA409, "Saturation", normal), (0xA40A, "Sharpness", normal),
        ]
        for (tag, name, meaning) in named { tags[tag] = (name, .names(meaning)) }
        return tags
    }()
}
