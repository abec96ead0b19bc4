extension PixelBuffer {
    /// The pixels at 8 bits a sample: a 16-bit buffer of an SDR transfer rounded (`(v + 128) / 257`),
    /// one of PQ or HLG (`description`) tone-mapped to SDR sRGB as an HDR decode is
    /// (`HDRRendering`); an 8-bit buffer as it is.
    public func reducedToEightBits(describedBy description: ColorDescription?) -> PixelBuffer {
        reducedToEightBits(describedBy: description, sourcePeak: nil)
    }

    /// ``reducedToEightBits(describedBy:)``, PQ tone-mapped from `sourcePeak` (cd/m²) when given.
    func reducedToEightBits(describedBy description: ColorDescription?, sourcePeak: Float?) -> PixelBuffer {
        guard isHighBitDepth else { return self }
        return bytes.withUnsafeBytes { raw in
            let samples = raw.bindMemory(to: UInt16.self)
            if let description, description.isHDR {
                return PixelBuffer(
                    width: width, height: height,
                    straightRGBA: HDRRendering.sdrPixels(
                        samples, pixelCount: width * height, description: description, sourcePeak: sourcePeak))
            }
            let narrowed = [UInt8](unsafeUninitializedCapacity: samples.count) { output, initialized in
                for index in 0..<samples.count { output[index] = UInt8((UInt32(samples[index]) + 128) / 257) }
                initialized = samples.count
            }
            return PixelBuffer(width: width, height: height, straightRGBA: narrowed)
        }
    }
}

extension Image {
    /// Whether any frame holds 16-bit samples (``DecodeOptions/keepsHighBitDepth``).
    public var isHighBitDepth: Bool { frames.contains { $0.pixels.isHighBitDepth } }

    /// The image at 8 bits a sample (``PixelBuffer/reducedToEightBits(describedBy:)``), its
    /// ``sourceColor`` saying how: PQ and HLG tone-mapped to SDR sRGB, other transfers rounded.
    /// The frames of a PQ animation are tone-mapped from one peak (the one the stream states,
    /// else the brightest over all of them), so that the same light comes out the same in each.
    /// An 8-bit image as it is.
    public func reducedToEightBits() -> Image {
        guard isHighBitDepth else { return self }
        var image = self
        let pixels = frames.map(\.pixels)
        let peak = frames.count > 1 ? sourceColor.flatMap { HDRRendering.commonPeak(pixels, description: $0) } : nil
        image.frames = frames.map {
            ImageFrame(pixels: $0.pixels.reducedToEightBits(describedBy: sourceColor, sourcePeak: peak), duration: $0.duration)
        }
        return image
    }
}
