extension PixelBuffer {
    /// Whether every pixel's red, green and blue are equal: a grey picture, which a PNG stores as
    /// grey samples. Stops at the first pixel that is not.
    var isGrey: Bool {
        bytes.withUnsafeBytes { raw in
            if isHighBitDepth {
                let samples = raw.bindMemory(to: UInt16.self)
                return stride(from: 0, to: samples.count, by: 4).allSatisfy {
                    samples[$0] == samples[$0 + 1] && samples[$0] == samples[$0 + 2]
                }
            }
            return stride(from: 0, to: raw.count, by: 4).allSatisfy { raw[$0] == raw[$0 + 1] && raw[$0] == raw[$0 + 2] }
        }
    }
}

extension Image {
    /// Whether an encoder stores this still as grey samples (a grey PNG, a one-component JPEG),
    /// as libvips keeps a grey picture grey: every pixel grey, and no profile kept with it but a
    /// grey one (a file's ICC profile must match its colour model).
    var isStoredAsGrey: Bool {
        if let profile = colorProfile {
            guard profile.count >= 20, profile[profile.startIndex + 16..<profile.startIndex + 20].elementsEqual("GRAY".utf8) else {
                return false
            }
        }
        return pixels.isGrey
    }
}
