/// A gain map a file declares (ISO 21496-1's in an AVIF, HEIF or JPEG XL container, or Apple's),
/// with its values when they read; nil values: the file has one, its metadata does not read.
struct FoundGainMap: Equatable {
    let metadata: GainMapMetadata?
}
