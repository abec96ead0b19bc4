import Foundation

/// An iPhone photograph's gain map in a JPEG, in Apple's own form (before ISO 21496-1): an image
/// the Multi-Picture index lists after the primary (``MultiPictureIndex``) whose XMP names it
/// `urn:com:apple:photo:2020:aux:hdrgainmap` (`apdi:AuxiliaryImageType`). Its headroom is the
/// XMP's `HDRGainMap:HDRGainMapHeadroom` (linear; newer iPhones write it), else the primary
/// image's EXIF maker note's (``ExifReader/appleHeadroom(inTIFF:)``). The values are libavif's
/// reading of Apple's (`avifJPEGParseGainMapXMPPropertiesAppleFormat`): gains from 0 to the
/// headroom (log2), gamma 1, offsets 0, HDR capacities from 0 to the headroom.
enum GainMapApple {
    static let auxiliaryType = Array("urn:com:apple:photo:2020:aux:hdrgainmap".utf8)

    /// The JPEG's Apple gain map; `exif` is the primary image's EXIF (TIFF structure).
    static func find(inJPEG bytes: UnsafeRawBufferPointer, exif: UnsafeRawBufferPointer?) -> FoundGainMap? {
        for image in MultiPictureIndex.appendedImages(in: bytes) {
            guard let xmp = JPEGSegments.first(0xE1, in: UnsafeRawBufferPointer(rebasing: bytes[image]), where: namesGainMap) else {
                continue
            }
            let stated = statedHeadroom(inXMP: String(decoding: xmp.dropFirst(GainMapXMP.signature.count), as: UTF8.self))
            let headroom = stated ?? exif.flatMap(ExifReader.appleHeadroom(inTIFF:))
            return FoundGainMap(metadata: headroom.map(metadata))
        }
        return nil
    }

    /// The headroom (log2) a gain map's XMP states in `HDRGainMap:HDRGainMapHeadroom` (linear):
    /// none when it has no such value, nil inside when the value is not a positive number.
    static func statedHeadroom(inXMP text: String) -> Double?? {
        guard let stated = GainMapXMP.texts(of: "HDRGainMap:HDRGainMapHeadroom", in: text)?.first else { return .none }
        return .some(Double(stated.trimmingCharacters(in: .whitespaces)).flatMap { $0 > 0 ? log2($0) : nil })
    }

    /// Whether an APP1 segment is XMP naming the image Apple's HDR gain map.
    private static func namesGainMap(_ segment: UnsafeRawBufferPointer) -> Bool {
        segment.prefix(GainMapXMP.signature.count).elementsEqual(GainMapXMP.signature) && segment.firstRange(of: auxiliaryType) != nil
    }

    /// The metadata of a gain map of `headroom` (log2).
    static func metadata(headroom: Double) -> GainMapMetadata {
        GainMapMetadata(
            gainMapMin: [0], gainMapMax: [headroom], gamma: [1], offsetSDR: [0], offsetHDR: [0], hdrCapacityMin: 0, hdrCapacityMax: headroom
        )
    }
}
