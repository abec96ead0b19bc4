package import Foundation

/// Ultra HDR JPEGs (Android's format: an SDR primary JPEG whose XMP declares Adobe's `hdrgm`
/// namespace, with the gain map JPEG appended) built from an ordinary JPEG, for the tests of what
/// is read from them. The gain map image here is the same JPEG with its own XMP: only its
/// metadata is read, never its pixels.
package enum UltraHDRFile {
    /// The XMP libultrahdr writes for a gain map image (generateXmpForSecondaryImage,
    /// lib/src/jpegrutils.cpp) for a content boost and capacity of 5 (log2 2.32193).
    package static let gainMapXMP =
        #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0" hdrgm:GainMapMin="0" hdrgm:GainMapMax="2.32193" hdrgm:Gamma="1" hdrgm:OffsetSDR="0" hdrgm:OffsetHDR="0" hdrgm:HDRCapacityMin="0" hdrgm:HDRCapacityMax="2.32193" hdrgm:BaseRenditionIsHDR="False"/></rdf:RDF></x:xmpmeta>"#

    /// The primary image's XMP: `hdrgm:Version` only, as Ultra HDR's primary carries it.
    package static let primaryXMP =
        #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:Description xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0"/></x:xmpmeta>"#

    /// `jpeg` with an APP1 XMP segment of `xmp` right after SOI.
    package static func withXMP(_ jpeg: Data, _ xmp: String) -> Data {
        let segment = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0] + Array(xmp.utf8)
        let length = segment.count + 2
        return Data(jpeg.prefix(2)) + Data([0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + segment) + Data(jpeg.dropFirst(2))
    }

    /// An Ultra HDR file of `jpeg`: the primary with its XMP, then, unless `gainMapXMP` is nil,
    /// a gain map image with that XMP.
    package static func make(_ jpeg: Data, gainMapXMP: String? = Self.gainMapXMP) -> Data {
        withXMP(jpeg, primaryXMP) + (gainMapXMP.map { withXMP(jpeg, $0) } ?? Data())
    }
}
