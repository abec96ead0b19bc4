/// A gain map a file declares (ISO 21496-1's in an AVIF, HEIF or JPEG XL container, or Apple's),
/// with its values when they read; nil values: the file has one, its metadata does not read.
struct FoundGainMap: Equatable {
    let metadata: GainMapMetadata?
}

extension ColorDescription {
    /// This description with the gain map a reader found (``hasGainMap``, and ``gainMap`` when its
    /// values read); unchanged when it found none.
    func noting(_ found: FoundGainMap?) -> ColorDescription {
        guard let found else { return self }
        var noted = self
        noted.hasGainMap = true
        noted.gainMap = found.metadata
        return noted
    }
}
