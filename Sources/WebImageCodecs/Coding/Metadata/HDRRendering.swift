#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// HDR pixels (PQ or HLG, as a decoder's 16-bit RGBA samples) rendered as 8-bit SDR sRGB, tone
/// mapped rather than clipped, and rather than shown as if their PQ or HLG code values were sRGB
/// (which is why such photographs came out dark and flat).
///
/// The rendering, each step a published one:
/// 1. Display light in cd/m²: PQ's EOTF (SMPTE ST 2084); for HLG the inverse OETF and BT.2100's
///    OOTF for a 1000 cd/m² display (system gamma 1.2 on BT.2020 luminance).
/// 2. The tone curve: BT.2390's EETF (ITU-R BT.2390-10, 5.4.1; the Hermite knee libplacebo and
///    mpv use by default), from the source's peak to SDR's, in PQ's perceptual domain. The source
///    peak is the one a PQ file states (``ColorDescription/peakLuminance``: a video's MaxCLL or
///    mastering display peak, as players take it), else the brightest pixel's largest component
///    (libavif 0.11 exposes no content light level), so a dim picture is not compressed and
///    nothing is clipped; SDR white is 203 cd/m²,
///    BT.2408's HDR reference white, so diffuse white in the HDR file lands near white in the SDR
///    one and only highlights are compressed. The curve is applied to the largest of R, G and B
///    and all three are scaled by the same ratio, which keeps hue and saturation (a curve per
///    channel turns bright colours toward white and shifts their hue).
/// 3. Gamut: BT.2020 or Display P3 to BT.709/sRGB primaries in linear light (the matrices below,
///    from colour-science's `matrix_RGB_to_RGB`), out-of-gamut components clipped.
/// 4. sRGB's encoding (IEC 61966-2-1) to 8 bits, rounded; alpha rounded from 16 bits.
///
/// The decoder's 16-bit samples and the result are held together, three times an 8-bit
/// picture's memory, which the decode limits are charged (``checkWorkingMemory(width:height:limits:)``).
enum HDRRendering {
    /// SDR white in cd/m²: BT.2408's HDR reference white.
    static let sdrWhite: Float = 203
    /// HLG's nominal display peak for the OOTF (BT.2100, Table 5).
    static let hlgDisplayPeak: Float = 1000

    /// What an HDR decode holds per pixel, in 8-bit RGBA pixels' worth (4 bytes): the decoder's
    /// 16-bit RGBA (8 bytes) and the 8-bit result (4). The limits count 8-bit pixels, so an HDR
    /// picture may have a third of their pixels.
    static let workingPixelsPerPixel = 3

    /// Throws `WebImageError.Code.tooLarge` when an HDR decode of `width` x `height` would hold
    /// more than `limits` allow (``workingPixelsPerPixel``).
    static func checkWorkingMemory(width: Int, height: Int, limits: DecodeLimits) throws(WebImageError) {
        try limits.checkMemory(
            width: width, height: height, bytesPerPixel: 4 * workingPixelsPerPixel,
            "HDR is decoded at 16 bits, \(workingPixelsPerPixel) times an 8-bit picture's memory")
    }

    /// A `width` x `height` 8-bit SDR picture from a decoder's 16-bit RGBA `samples`
    /// (``sdrPixels(_:pixelCount:description:)``).
    static func pixels(_ samples: [UInt16], width: Int, height: Int, description: ColorDescription) -> PixelBuffer {
        let pixels = samples.withUnsafeBufferPointer { sdrPixels($0, pixelCount: width * height, description: description) }
        return PixelBuffer(width: width, height: height, straightRGBA: pixels)
    }

    /// The source peak a PQ file states (``ColorDescription/peakLuminance``), nil for HLG, whose
    /// light is its OOTF's for a 1000 cd/m² display.
    static func statedPeak(_ description: ColorDescription) -> Float? {
        guard description.transfer == ColorDescription.perceptualQuantizer, let stated = description.peakLuminance, stated > 0 else {
            return nil
        }
        return Float(min(stated, 10_000))
    }

    /// The peak several frames of one stream are tone-mapped from, so that the same light comes
    /// out the same in each (an animated preview of a video): the stated one, else the brightest
    /// component over every frame. Nil for an SDR description or HLG (its OOTF fixes its light).
    static func commonPeak(_ frames: [PixelBuffer], description: ColorDescription) -> Float? {
        guard description.transfer == ColorDescription.perceptualQuantizer else { return nil }
        if let stated = statedPeak(description) { return stated }
        let light = DisplayLight(hlg: false)
        return frames.filter(\.isHighBitDepth).reduce(Float(0)) { peak, frame in
            frame.bytes.withUnsafeBytes { raw in
                max(peak, brightest(raw.bindMemory(to: UInt16.self), pixelCount: frame.width * frame.height, light: light))
            }
        }
    }

    /// The brightest component's light in `samples`: the first of the rendering's two passes.
    private static func brightest(_ samples: UnsafeBufferPointer<UInt16>, pixelCount: Int, light: DisplayLight) -> Float {
        var peak: Float = 0
        for pixel in 0..<pixelCount {
            let (red, green, blue) = light.of(samples, pixel)
            peak = max(peak, red, green, blue)
        }
        return peak
    }

    /// 8-bit straight RGBA from `samples`, 16-bit RGBA (0...65535) of `description`'s transfer
    /// and primaries, tone-mapped from `sourcePeak` (cd/m²) when given. Two passes over the
    /// samples, so that no buffer of light is held: the first finds the peak, the second renders.
    static func sdrPixels(
        _ samples: UnsafeBufferPointer<UInt16>, pixelCount: Int, description: ColorDescription, sourcePeak: Float? = nil
    ) -> [UInt8] {
        let light = DisplayLight(hlg: description.transfer == ColorDescription.hybridLogGamma)
        let peak = sourcePeak ?? statedPeak(description) ?? brightest(samples, pixelCount: pixelCount, light: light)
        let curve = ToneCurve(sourcePeak: max(peak, sdrWhite), targetPeak: sdrWhite)
        let gamut = Self.gamut(toBT709From: description.primaries)
        return [UInt8](unsafeUninitializedCapacity: pixelCount * 4) { output, initialized in
            for pixel in 0..<pixelCount {
                var (red, green, blue) = light.of(samples, pixel)
                let largest = max(red, green, blue)
                let ratio = largest > 0 ? curve.map(largest) / largest / sdrWhite : 0
                (red, green, blue) = (red * ratio, green * ratio, blue * ratio)
                if let m = gamut {
                    (red, green, blue) = (
                        m[0] * red + m[1] * green + m[2] * blue, m[3] * red + m[4] * green + m[5] * blue,
                        m[6] * red + m[7] * green + m[8] * blue
                    )
                }
                output[pixel * 4] = SRGBEncoding.byte(red)
                output[pixel * 4 + 1] = SRGBEncoding.byte(green)
                output[pixel * 4 + 2] = SRGBEncoding.byte(blue)
                output[pixel * 4 + 3] = UInt8((UInt32(samples[pixel * 4 + 3]) + 128) / 257)
            }
            initialized = pixelCount * 4
        }
    }

    /// A pixel's R, G, B in cd/m².
    struct DisplayLight {
        let hlg: Bool
        let table: [Float]

        init(hlg: Bool) {
            self.hlg = hlg
            table = hlg ? TransferTable.hlgSceneLight : TransferTable.pqDisplayLight
        }

        func of(_ samples: UnsafeBufferPointer<UInt16>, _ pixel: Int) -> (Float, Float, Float) {
            let (red, green, blue) = (
                table[Int(samples[pixel * 4])], table[Int(samples[pixel * 4 + 1])], table[Int(samples[pixel * 4 + 2])]
            )
            guard hlg else { return (red, green, blue) }
            // BT.2100's OOTF: Fd = Lw * Ys^(gamma - 1) * E, with BT.2020's luminance weights.
            let luminance = 0.2627 * red + 0.6780 * green + 0.0593 * blue
            let gain = luminance > 0 ? hlgDisplayPeak * powf(luminance, 0.2) : 0
            return (red * gain, green * gain, blue * gain)
        }
    }

    /// The linear-light matrix from `primaries` (H.273) to BT.709's; nil for BT.709 itself or
    /// primaries not signalled.
    static func gamut(toBT709From primaries: Int?) -> [Float]? {
        switch primaries {
        // colour.matrix_RGB_to_RGB(RGB_COLOURSPACES["ITU-R BT.2020"], RGB_COLOURSPACES["ITU-R BT.709"]), colour-science 0.4.7.
        case 9:
            return [
                1.660_491_0, -0.587_641_1, -0.072_849_9, -0.124_550_5, 1.132_899_9, -0.008_349_4, -0.018_150_8, -0.100_578_9,
                1.118_729_7,
            ]
        // The same from "Display P3".
        case 12:
            return [1.224_940_2, -0.224_940_2, 0, -0.042_057_0, 1.042_057_0, 0, -0.019_637_6, -0.078_636_0, 1.098_273_6]
        default:
            return nil
        }
    }
}

/// PQ (SMPTE ST 2084) between code values in 0...1 and cd/m².
enum PerceptualQuantizer {
    private static let m1: Float = 2610 / 16384
    private static let m2: Float = 2523 / 4096 * 128
    private static let c1: Float = 3424 / 4096
    private static let c2: Float = 2413 / 4096 * 32
    private static let c3: Float = 2392 / 4096 * 32

    /// The EOTF: cd/m² for a code value.
    static func light(_ code: Float) -> Float {
        let power = powf(max(code, 0), 1 / m2)
        return 10_000 * powf(max(power - c1, 0) / (c2 - c3 * power), 1 / m1)
    }

    /// The inverse EOTF: the code value for cd/m².
    static func code(_ light: Float) -> Float {
        let power = powf(max(light, 0) / 10_000, m1)
        return powf((c1 + c2 * power) / (1 + c3 * power), m2)
    }
}

/// BT.2390's EETF from `sourcePeak` to `targetPeak` cd/m² (black at 0 for both, so its black
/// lift term is 0): identity below the knee, a Hermite spline from the knee to the target peak.
struct ToneCurve {
    let sourceCode: Float
    let maximumLuminance: Float
    let kneeStart: Float

    init(sourcePeak: Float, targetPeak: Float) {
        sourceCode = PerceptualQuantizer.code(sourcePeak)
        maximumLuminance = PerceptualQuantizer.code(targetPeak) / sourceCode
        kneeStart = 1.5 * maximumLuminance - 0.5
    }

    /// The light shown for `light` cd/m².
    func map(_ light: Float) -> Float {
        guard maximumLuminance < 1 else { return light }
        let e1 = min(PerceptualQuantizer.code(light) / sourceCode, 1)
        guard e1 >= kneeStart else { return light }
        let t = (e1 - kneeStart) / (1 - kneeStart)
        let (t2, t3) = (t * t, t * t * t)
        let e2 = (2 * t3 - 3 * t2 + 1) * kneeStart + (t3 - 2 * t2 + t) * (1 - kneeStart) + (-2 * t3 + 3 * t2) * maximumLuminance
        return PerceptualQuantizer.light(e2 * sourceCode)
    }
}

/// Light for each 16-bit code value, made once per transfer.
enum TransferTable {
    /// PQ: cd/m².
    static let pqDisplayLight: [Float] = (0...65535).map { PerceptualQuantizer.light(Float($0) / 65535) }

    /// HLG's inverse OETF (BT.2100, Table 5): scene light in 0...1.
    static let hlgSceneLight: [Float] = (0...65535).map { code in
        let (a, b, c): (Float, Float, Float) = (0.178_832_77, 0.284_668_92, 0.559_910_73)
        let signal = Float(code) / 65535
        return signal <= 0.5 ? signal * signal / 3 : (expf((signal - c) / a) + b) / 12
    }
}

/// sRGB's encoding of linear light in 0...1 to 8 bits, by a table fine enough that every
/// output level is reached from the exact formula's interval.
enum SRGBEncoding {
    private static let steps = 65536
    private static let table: [UInt8] = (0...steps).map { index in
        let linear = Float(index) / Float(steps)
        let encoded = linear <= 0.003_130_8 ? 12.92 * linear : 1.055 * powf(linear, 1 / 2.4) - 0.055
        return UInt8((encoded * 255).rounded())
    }

    static func byte(_ linear: Float) -> UInt8 {
        table[Int((min(max(linear, 0), 1) * Float(steps)).rounded())]
    }
}
