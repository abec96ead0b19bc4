/// An AVIF's or HEIF's ISO 21496-1 gain map, read from the container: libavif 0.11 and libheif
/// 1.15 (Debian's) do not expose it. The gain map is a `tmap` derived image item (ISO/IEC
/// 23008-12, the HEIF amendment for tone-mapped images): its `dimg` references name the base image
/// (the primary) and the gain map image, an `altr` entity group lists it before the primary (a
/// reader that can apply it prefers it), and its data is a version byte (0) and ISO 21496-1's
/// metadata, read by ``GainMapISO``. A file declares it only with the `tmap` brand in its `ftyp`.
/// These are libavif 1.x's conditions (`avifDecoderFindGainMapItem`): a file that fails one of
/// them, or whose version or minimum version is not 0, has no gain map (libavif ignores it); one
/// whose metadata does not read (cut short, a zero denominator, bytes past its end) has a gain map
/// without values (libavif refuses the file; its pictures are read here).
///
/// Without one, an iPhone HEIC's Apple gain map (an auxiliary image of Apple's type) is read, its
/// headroom as in a JPEG (``GainMapApple``).
enum GainMapHEIF {
    /// The file's gain map, or nil when it declares none: an ISO 21496-1 one, else Apple's.
    static func find(in bytes: UnsafeRawBufferPointer) -> FoundGainMap? {
        let top = ISOBoxes(bytes)
        guard let meta = top.first("meta") else { return nil }
        let boxes = ISOBoxes(UnsafeRawBufferPointer(rebasing: meta.dropFirst(4)))
        guard let primary = boxes.first("pitm").flatMap(primaryItem) else { return nil }
        if let ftyp = top.first("ftyp"), brands(ftyp).contains("tmap"), let found = isoGainMap(bytes, boxes: boxes, primary: primary) {
            return found
        }
        guard let gainMap = appleGainMapItem(boxes, primary: primary) else { return nil }
        return FoundGainMap(
            metadata: appleHeadroom(bytes, boxes: boxes, primary: primary, gainMap: gainMap).map { GainMapApple.metadata(headroom: $0) })
    }

    /// Apple's HDR gain map in an iPhone HEIC: an auxiliary image (`auxl` reference to the
    /// primary) whose `auxC` property says `urn:com:apple:photo:2020:aux:hdrgainmap`.
    private static func appleGainMapItem(_ boxes: ISOBoxes, primary: UInt32) -> UInt32? {
        guard let iprp = boxes.first("iprp").map(ISOBoxes.init), let properties = iprp.first("ipco").map({ ISOBoxes($0).boxes }),
            let associations = iprp.first("ipma").map(propertyAssociations),
            let auxiliaries = boxes.first("iref").map({ references($0, type: "auxl") })
        else { return nil }
        return auxiliaries.keys.sorted().first { item in
            auxiliaries[item, default: []].contains(primary)
                && (associations[item] ?? []).contains { index in
                    index > 0 && index <= properties.count && properties[index - 1].type == "auxC"
                        && auxiliaryType(properties[index - 1].payload).elementsEqual(GainMapApple.auxiliaryType)
                }
        }
    }

    /// An Apple gain map's headroom (log2), as in a JPEG (``GainMapApple``): the XMP describing the
    /// gain map item (a `mime` item of `application/rdf+xml` with a `cdsc` reference to it) when it
    /// states one, else the maker note of the EXIF describing the primary (an `Exif` item, its
    /// TIFF structure after a 4-byte offset: ISO/IEC 23008-12, A.2.1).
    private static func appleHeadroom(_ bytes: UnsafeRawBufferPointer, boxes: ISOBoxes, primary: UInt32, gainMap: UInt32) -> Double? {
        guard let items = boxes.first("iinf").flatMap(items), let locations = boxes.first("iloc").flatMap(locations),
            let descriptions = boxes.first("iref").map({ references($0, type: "cdsc") })
        else { return nil }
        func data(describing target: UInt32, _ matches: (Item) -> Bool) -> [UInt8]? {
            items.first { matches($0) && descriptions[$0.id, default: []].contains(target) }
                .flatMap { locations[$0.id]?.data(file: bytes, idat: boxes.first("idat")) }
        }
        let xmp = data(describing: gainMap) { $0.type == "mime" && $0.contentType == "application/rdf+xml" }
        if let stated = xmp.flatMap({ GainMapApple.statedHeadroom(inXMP: String(decoding: $0, as: UTF8.self)) }) { return stated }
        guard let exif = data(describing: primary, { $0.type == "Exif" }), exif.count > 4 else { return nil }
        let start = 4 + Int(exif[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard start < exif.count else { return nil }
        return exif[start...].withUnsafeBytes(ExifReader.appleHeadroom(inTIFF:))
    }

    /// An `auxC` property's type: after its version and flags, up to a zero byte.
    private static func auxiliaryType(_ auxC: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer.SubSequence {
        auxC.dropFirst(4).prefix { $0 != 0 }
    }

    /// The property indices (1-based, into `ipco`) an `ipma` box associates with each item.
    private static func propertyAssociations(_ ipma: UnsafeRawBufferPointer) -> [UInt32: [Int]] {
        var reader = BigEndianReader(ipma)
        guard let header = reader.unsigned(4), let count = reader.unsigned(4) else { return [:] }
        let (version, wide) = (header >> 24, header & 1 != 0)
        var associations: [UInt32: [Int]] = [:]
        for _ in 0..<count {
            guard let item = reader.unsigned(version < 1 ? 2 : 4), let properties = reader.unsigned(1) else { break }
            var indices: [Int] = []
            for _ in 0..<properties {
                guard let entry = reader.unsigned(wide ? 2 : 1) else { break }
                indices.append(Int(entry & (wide ? 0x7FFF : 0x7F)))
            }
            associations[item] = indices
        }
        return associations
    }

    /// An ISO 21496-1 `tmap` item's gain map (the `tmap` brand is there), or nil.
    private static func isoGainMap(_ bytes: UnsafeRawBufferPointer, boxes: ISOBoxes, primary: UInt32) -> FoundGainMap? {
        guard let items = boxes.first("iinf").flatMap(items), let tmap = items.first(where: { $0.type == "tmap" })?.id,
            let references = boxes.first("iref").map({ references($0, type: "dimg") }), references[tmap]?.first == primary,
            references[tmap]?.count == 2, boxes.first("grpl").map({ prefers(tmap, over: primary, groups: $0) }) == true,
            let locations = boxes.first("iloc").flatMap(locations), let location = locations[tmap]
        else { return nil }
        guard let payload = location.data(file: bytes, idat: boxes.first("idat")), payload.count >= 3 else {
            return FoundGainMap(metadata: nil)
        }
        // The box's version, then the metadata's minimum version: versions a reader must know.
        guard payload[0] == 0, GainMapISO.hasKnownMinimumVersion(payload.dropFirst()) else { return nil }
        return FoundGainMap(metadata: GainMapISO.metadata(payload: Array(payload.dropFirst())))
    }

    /// The major and compatible brands of an `ftyp` box.
    private static func brands(_ ftyp: UnsafeRawBufferPointer) -> [String] {
        stride(from: 0, to: ftyp.count - 3, by: 4).filter { $0 != 4 }.map { String(decoding: ftyp[$0..<($0 + 4)], as: UTF8.self) }
    }

    /// `pitm`'s item ID (16 bits in version 0, else 32).
    private static func primaryItem(_ pitm: UnsafeRawBufferPointer) -> UInt32? {
        var reader = BigEndianReader(pitm)
        guard let version = reader.fullBoxVersion() else { return nil }
        return reader.unsigned(version == 0 ? 2 : 4)
    }

    /// An item an `infe` box describes.
    struct Item {
        let id: UInt32
        let type: String
        /// A `mime` item's content type.
        let contentType: String?
    }

    /// Each `infe` (versions 2 and 3) of an `iinf` box: item ID, type, and a `mime` item's content
    /// type (after the item's name, each a string ended by a zero).
    private static func items(_ iinf: UnsafeRawBufferPointer) -> [Item]? {
        var reader = BigEndianReader(iinf)
        guard let version = reader.fullBoxVersion(), reader.unsigned(version == 0 ? 2 : 4) != nil else { return nil }
        return ISOBoxes(reader.rest).all("infe").compactMap { infe in
            var entry = BigEndianReader(infe)
            guard let version = entry.fullBoxVersion(), version >= 2, let id = entry.unsigned(version == 2 ? 2 : 4),
                entry.unsigned(2) != nil, let type = entry.bytes(4).map({ String(decoding: $0, as: UTF8.self) })
            else { return nil }
            let strings = entry.rest.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
            let contentType = type == "mime" && strings.count > 1 ? String(decoding: strings[1], as: UTF8.self) : nil
            return Item(id: id, type: type, contentType: contentType)
        }
    }

    /// The references of `type` in an `iref` box (`dimg`: the items a derived item is made from;
    /// `auxl`: the items an auxiliary image belongs to), by the referring item.
    private static func references(_ iref: UnsafeRawBufferPointer, type: String) -> [UInt32: [UInt32]] {
        var reader = BigEndianReader(iref)
        guard let version = reader.fullBoxVersion() else { return [:] }
        let size = version == 0 ? 2 : 4
        var derived: [UInt32: [UInt32]] = [:]
        for reference in ISOBoxes(reader.rest).all(type) {
            var entry = BigEndianReader(reference)
            guard let from = entry.unsigned(size), let count = entry.unsigned(2) else { continue }
            var targets: [UInt32] = []
            for _ in 0..<count {
                guard let target = entry.unsigned(size) else { break }
                targets.append(target)
            }
            derived[from] = targets
        }
        return derived
    }

    /// Whether an `altr` group of a `grpl` box lists `preferred` before `other`.
    private static func prefers(_ preferred: UInt32, over other: UInt32, groups grpl: UnsafeRawBufferPointer) -> Bool {
        ISOBoxes(grpl).all("altr").contains { altr in
            var reader = BigEndianReader(altr)
            guard reader.fullBoxVersion() != nil, reader.unsigned(4) != nil, let count = reader.unsigned(4) else { return false }
            let entities = (0..<min(count, 1024)).compactMap { _ in reader.unsigned(4) }
            guard let first = entities.firstIndex(of: preferred), let second = entities.firstIndex(of: other) else { return false }
            return first < second
        }
    }

    /// Where an item's data lies: in the file (construction method 0) or in `idat` (1), as
    /// extents after a base offset.
    struct Location {
        let inItemData: Bool
        let extents: [(offset: UInt64, length: UInt64)]

        /// The item's bytes joined; nil when an extent lies outside, or its data is over 64 KiB
        /// (metadata is a few hundred bytes).
        func data(file: UnsafeRawBufferPointer, idat: UnsafeRawBufferPointer?) -> [UInt8]? {
            guard let source = inItemData ? idat : file else { return nil }
            var data: [UInt8] = []
            for extent in extents {
                guard extent.offset <= UInt64(source.count), extent.length <= UInt64(source.count) - extent.offset,
                    data.count + Int(extent.length) <= 65536
                else { return nil }
                data += source[Int(extent.offset)..<Int(extent.offset + extent.length)]
            }
            return data
        }
    }

    /// The locations an `iloc` box (versions 0 to 2) gives, by item ID.
    private static func locations(_ iloc: UnsafeRawBufferPointer) -> [UInt32: Location]? {
        var reader = BigEndianReader(iloc)
        guard let version = reader.fullBoxVersion(), version <= 2, let sizes = reader.unsigned(2),
            let count = reader.unsigned(version < 2 ? 2 : 4)
        else { return nil }
        let (offsetSize, lengthSize, baseSize) = (Int(sizes >> 12), Int(sizes >> 8 & 15), Int(sizes >> 4 & 15))
        let indexSize = version == 0 ? 0 : Int(sizes & 15)
        var found: [UInt32: Location] = [:]
        for _ in 0..<count {
            guard let id = reader.unsigned(version < 2 ? 2 : 4) else { return nil }
            let method = version == 0 ? 0 : reader.unsigned(2).map { $0 & 15 }
            guard let method, reader.unsigned(2) != nil, let base = reader.unsigned64(baseSize), let extentCount = reader.unsigned(2)
            else { return nil }
            // Fields of 0 bytes read nothing: the count alone could make the loop long.
            guard offsetSize + lengthSize + indexSize > 0 || extentCount <= 1 else { return nil }
            var extents: [(offset: UInt64, length: UInt64)] = []
            for _ in 0..<extentCount {
                guard reader.unsigned64(indexSize) != nil, let offset = reader.unsigned64(offsetSize),
                    let length = reader.unsigned64(lengthSize)
                else { return nil }
                extents.append((base &+ offset, length))
            }
            found[id] = Location(inItemData: method == 1, extents: extents)
        }
        return found
    }
}
