import Foundation

/// An Ultra HDR JPEG's gain map metadata: the `hdrgm` values in the XMP of its gain map image,
/// the JPEG appended after the primary one (whose own XMP only declares `hdrgm:Version` and lists
/// the gain map in its `Container:Directory`). Read as libultrahdr reads them: attributes or
/// elements (one value, or an `rdf:Seq` of three for red, green and blue), the optional ones
/// defaulted, `GainMapMax` and `HDRCapacityMax` required; a value that is not a number makes the
/// metadata unreadable (nil).
enum GainMapXMP {
    /// What an APP1 segment of XMP begins with (XMP Specification Part 3, 1.1.3).
    static let signature = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0]

    /// The metadata of the first APP1 XMP packet in `bytes`, past its start, that states a
    /// `hdrgm:GainMapMax`: the gain map image's.
    static func metadata(inFile bytes: UnsafeRawBufferPointer) -> GainMapMetadata? {
        let found = JPEGSegments.firstSigned(0xE1, signature, anywhereIn: bytes) { payload -> GainMapMetadata?? in
            let xmp = String(decoding: payload, as: UTF8.self)
            return xmp.contains("hdrgm:GainMapMax") ? .some(metadata(in: xmp)) : nil
        }
        return found ?? nil
    }

    /// The metadata an XMP packet states, or nil without the required values or with one that
    /// does not read.
    static func metadata(in xmp: String) -> GainMapMetadata? {
        func values(_ name: String) -> [Double]?? {
            guard let text = texts(of: "hdrgm:" + name, in: xmp) else { return .some(nil) }
            let numbers = text.compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            return numbers.count == text.count && (numbers.count == 1 || numbers.count == 3) ? .some(numbers) : .none
        }
        guard let maximum = values("GainMapMax"), let gainMapMax = maximum, let capacity = values("HDRCapacityMax"),
            let hdrCapacityMax = capacity?.first, let gainMapMin = values("GainMapMin"), let gamma = values("Gamma"),
            let offsetSDR = values("OffsetSDR"), let offsetHDR = values("OffsetHDR"), let capacityMin = values("HDRCapacityMin")
        else { return nil }
        let base = texts(of: "hdrgm:BaseRenditionIsHDR", in: xmp)?.first?.lowercased()
        guard base == nil || base == "true" || base == "false" else { return nil }
        return GainMapMetadata(
            gainMapMin: gainMapMin ?? [0], gainMapMax: gainMapMax, gamma: gamma ?? [1], offsetSDR: offsetSDR ?? [1.0 / 64],
            offsetHDR: offsetHDR ?? [1.0 / 64], hdrCapacityMin: capacityMin?.first ?? 0, hdrCapacityMax: hdrCapacityMax,
            baseRenditionIsHDR: base == "true")
    }

    /// The text of `name` as an attribute (`name="v"`) or an element (`<name>v</name>`, or its
    /// `rdf:li` items); nil when it is not there.
    static func texts(of name: String, in xmp: String) -> [String]? {
        for quote in ["\"", "'"] {
            if let range = xmp.range(of: name + "=" + quote), let end = xmp[range.upperBound...].firstIndex(of: Character(quote)) {
                return [String(xmp[range.upperBound..<end])]
            }
        }
        guard let open = xmp.range(of: "<" + name + ">"), let close = xmp[open.upperBound...].range(of: "</" + name + ">") else {
            return nil
        }
        let body = xmp[open.upperBound..<close.lowerBound]
        guard body.contains("<rdf:li") else { return [String(body)] }
        return body.components(separatedBy: "<rdf:li").dropFirst().compactMap { item in
            guard let start = item.firstIndex(of: ">"), let end = item.range(of: "</rdf:li>") else { return nil }
            return String(item[item.index(after: start)..<end.lowerBound])
        }
    }
}
