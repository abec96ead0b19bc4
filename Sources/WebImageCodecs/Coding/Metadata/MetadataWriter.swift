import CWebP
import Foundation

/// Writes an image's colour profile and EXIF into encoded bytes: a JPEG's APP1 and APP2
/// `ICC_PROFILE` segments (split in 65,519-byte pieces), a PNG's `iCCP` and `eXIf` chunks after
/// `IHDR`, a WebP's `ICCP` and `EXIF` chunks through libwebpmux. The EXIF's orientation is set to
/// the image's; an image that is not upright and has no EXIF gets a minimal one that says so, so
/// `--keep-orientation` output shows the right way up. GIF has room for neither.
enum MetadataWriter {
    static let iccPieceSize = 65_519

    static func embed(_ image: Image, in encoded: Data, format: ImageFormat) throws(WebImageError) -> Data {
        let exif =
            image.exif.map { ExifReader.setting(image.orientation, in: $0) }
            ?? (image.orientation == .up ? nil : ExifReader.minimal(image.orientation))
        guard image.colorProfile != nil || exif != nil else { return encoded }
        switch format {
        case .jpeg: return jpeg(encoded, profile: image.colorProfile, exif: exif)
        case .png: return png(encoded, profile: image.colorProfile, exif: exif)
        case .webP: return try webP(encoded, profile: image.colorProfile, exif: exif)
        default: return encoded
        }
    }

    private static func jpeg(_ encoded: Data, profile: Data?, exif: Data?) -> Data {
        guard let offset = encoded.withUnsafeBytes(JPEGSegments.metadataInsertionOffset(in:)) else { return encoded }
        var segments = Data()
        func append(_ marker: UInt8, _ payload: Data) {
            let length = payload.count + 2
            segments.append(contentsOf: [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)])
            segments.append(payload)
        }
        if let exif, exif.count + 8 <= 65_535 { append(0xE1, Data("Exif".utf8) + [0, 0] + exif) }
        if let profile, !profile.isEmpty {
            let count = (profile.count + iccPieceSize - 1) / iccPieceSize
            if count <= 255 {
                for index in 0..<count {
                    let start = profile.startIndex + index * iccPieceSize
                    let piece = profile[start..<min(profile.endIndex, start + iccPieceSize)]
                    append(0xE2, Data("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(count)] + piece)
                }
            }
        }
        var output = encoded
        output.insert(contentsOf: segments, at: encoded.startIndex + offset)
        return output
    }

    private static func png(_ encoded: Data, profile: Data?, exif: Data?) -> Data {
        // The signature and IHDR (13 bytes of data) are always the first 33 bytes.
        let afterHeader = 33
        guard encoded.count > afterHeader else { return encoded }
        var chunks: [UInt8] = []
        if let profile { chunks += PNGChunk(type: "iCCP", data: Array("ICC Profile".utf8) + [0, 0] + Zlib.deflate(profile)).encoded }
        if let exif { chunks += PNGChunk(type: "eXIf", data: Array(exif)).encoded }
        var output = encoded
        output.insert(contentsOf: chunks, at: encoded.startIndex + afterHeader)
        return output
    }

    private static func webP(_ encoded: Data, profile: Data?, exif: Data?) throws(WebImageError) -> Data {
        let assembled: Data? = encoded.withUnsafeBytes { bytes in
            var source = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
            guard let mux = WebPMuxCreate(&source, 1) else { return nil }
            defer { WebPMuxDelete(mux) }
            for (fourCC, payload) in [("ICCP", profile), ("EXIF", exif)] {
                guard let payload else { continue }
                let status = payload.withUnsafeBytes { payload in
                    var chunk = WebPData(bytes: payload.baseAddress?.assumingMemoryBound(to: UInt8.self), size: payload.count)
                    return WebPMuxSetChunk(mux, fourCC, &chunk, 1)
                }
                guard status == WEBP_MUX_OK else { return nil }
            }
            var output = WebPData()
            guard WebPMuxAssemble(mux, &output) == WEBP_MUX_OK, let bytes = output.bytes else { return nil }
            defer { WebPDataClear(&output) }
            return Data(bytes: bytes, count: output.size)
        }
        guard let assembled else { throw WebImageError(.encodeFailed, "libwebpmux could not add the colour profile or EXIF") }
        return assembled
    }
}
