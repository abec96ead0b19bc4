import Foundation
import WebImage

/// The JSON `/info` answers for a source's bytes (imgproxy Pro's "Getting an image info"):
/// `size`, `format`, `width`, `height` (as stored) with `orientation`, `exif` (exifread's names),
/// and on request `frames`, `color_profile`, `color_description`, `crop`, `average`, `dominant_colors`, `thumbhash` and
/// `blurhash`, in that order.
/// Synchronous CPU work for the work pool.
struct ImageInfo {
    let options: InfoOptions
    /// The most pixels a source may declare, as for processing.
    let maximumSourcePixels: Int
    let coders: CodersManager

    /// The JSON text.
    /// - Throws: 415/422 as processing answers a source that is not an image or over a limit.
    func json(for data: Data) throws(ProxyError) -> String {
        let header: ImageHeader
        do { header = try ImageHeader(data: data) } catch { throw ImageProcessor.proxyError(error) }
        let pixelLimit = options.security.sourcePixels ?? maximumSourcePixels
        guard header.pixelCount <= pixelLimit else {
            throw .unprocessable("the source's \(header.width)x\(header.height) pixels are over the limit")
        }
        var members: [(String, String)] = []
        if options.size { members.append(("size", String(data.count))) }
        if options.format { members.append(("format", Self.quoted(header.format.rawValue))) }
        if options.dimensions {
            members += [
                ("width", String(header.width)), ("height", String(header.height)), ("orientation", String(header.orientation.rawValue)),
            ]
        }
        if options.exif, let tags = ExifDump.tags(of: data), !tags.isEmpty {
            members.append(("exif", Self.object(tags.map { ($0.0, Self.quoted($0.1)) })))
        }
        guard options.decodes else { return Self.object(members) }
        let decodeOptions = DecodeOptions(
            limits: DecodeLimits(maximumPixelCount: pixelLimit), firstFrameOnly: !options.frames && options.page == 0,
            keepsColorProfile: options.colorProfile)
        let image: Image
        do { image = try coders.decode(data, options: decodeOptions) } catch { throw ImageProcessor.proxyError(error) }
        if options.frames { members.append(("frames", String(image.frames.count))) }
        if options.colorProfile { members.append(("color_profile", image.colorProfile == nil ? "false" : "true")) }
        if options.colorDescription { members.append(("color_description", Self.colorDescription(image.sourceColor))) }
        guard options.page < image.frames.count else {
            throw .badRequest("page \(options.page) is past the source's \(image.frames.count) (page)")
        }
        let pixels = image.frames[options.page].pixels
        if let crop = options.crop { members.append(("crop", Self.cropPlace(crop, width: pixels.width, height: pixels.height))) }
        if options.average { members.append(("average", Self.average(pixels, ignoringTransparent: options.averageIgnoresTransparent))) }
        if options.dominantColors {
            members.append(
                ("dominant_colors", DominantColors.json(DominantColors.swatches(of: pixels, buildMissed: options.buildsMissedColors))))
        }
        if options.thumbHash {
            members.append(("thumbhash", Self.quoted(Data(ThumbHash.encode(Self.fitted(pixels, within: 100))).base64EncodedString())))
        }
        if let components = options.blurHash {
            members.append(("blurhash", Self.quoted(BlurHash.encode(pixels, componentsX: components.x, componentsY: components.y))))
        }
        return Self.object(members)
    }

    /// The source's colour description as a JSON object: `bit_depth`, `primaries`, `transfer`
    /// (names, or H.273 code points; null when not signalled), `matrix` (the code point), `hdr`,
    /// `gain_map`, the `gain_map_metadata` of an Ultra HDR JPEG (its `hdrgm` values) or of an AVIF's
    /// or HEIF's ISO 21496-1 gain map (in the same terms) when it states
    /// them, and `peak_luminance` (cd/m²) when an HDR video states its light level; null for a
    /// format whose description is not read.
    static func colorDescription(_ description: ColorDescription?) -> String {
        guard let description else { return "null" }
        var members = [
            ("bit_depth", String(description.bitDepth)), ("primaries", description.primariesName.map(quoted) ?? "null"),
            ("transfer", description.transferName.map(quoted) ?? "null"), ("matrix", description.matrix.map(String.init) ?? "null"),
            ("hdr", description.isHDR ? "true" : "false"), ("gain_map", description.hasGainMap ? "true" : "false"),
        ]
        if let gainMap = description.gainMap { members.append(("gain_map_metadata", Self.gainMap(gainMap))) }
        if let peak = description.peakLuminance { members.append(("peak_luminance", String(peak))) }
        return object(members)
    }

    /// A gain map's `hdrgm` values: gains and capacities in log2, per channel where the file gives three.
    static func gainMap(_ metadata: GainMapMetadata) -> String {
        func list(_ values: [Double]) -> String { "[" + values.map { String($0) }.joined(separator: ", ") + "]" }
        return object([
            ("gain_map_min", list(metadata.gainMapMin)), ("gain_map_max", list(metadata.gainMapMax)), ("gamma", list(metadata.gamma)),
            ("offset_sdr", list(metadata.offsetSDR)), ("offset_hdr", list(metadata.offsetHDR)),
            ("hdr_capacity_min", String(metadata.hdrCapacityMin)), ("hdr_capacity_max", String(metadata.hdrCapacityMax)),
            ("base_rendition_is_hdr", metadata.baseRenditionIsHDR ? "true" : "false"),
        ])
    }

    /// `pixels` scaled to fit `side` x `side`, as they are when they already fit.
    static func fitted(_ pixels: PixelBuffer, within side: Int) -> PixelBuffer {
        guard pixels.width > side || pixels.height > side else { return pixels }
        return pixels.resized(by: Double(side) / Double(max(pixels.width, pixels.height)))
    }

    /// The crop's rectangle as shares of the image, placed as processing places it.
    static func cropPlace(_ crop: ProcessingOptions.Crop, width: Int, height: Int) -> String {
        let cropWidth = ProcessingPlan.cropSide(crop.width, of: width)
        let cropHeight = ProcessingPlan.cropSide(crop.height, of: height)
        let origin = (crop.gravity ?? .center).origin(width: cropWidth, height: cropHeight, outerWidth: width, outerHeight: height)
        return object([
            ("left", number(Double(origin.x) / Double(width))), ("top", number(Double(origin.y) / Double(height))),
            ("width", number(Double(cropWidth) / Double(width))), ("height", number(Double(cropHeight) / Double(height))),
        ])
    }

    /// The mean of each channel, rounded, over every pixel or only those not fully transparent.
    static func average(_ pixels: PixelBuffer, ignoringTransparent: Bool) -> String {
        var sums = [Double](repeating: 0, count: 4)
        var count = 0.0
        let bytes = pixels.bytes
        for offset in stride(from: 0, to: bytes.count, by: 4) where !(ignoringTransparent && bytes[offset + 3] == 0) {
            for channel in 0..<4 { sums[channel] += Double(bytes[offset + channel]) }
            count += 1
        }
        let means = sums.map { count > 0 ? Int(($0 / count).rounded()) : 0 }
        return object([("R", String(means[0])), ("G", String(means[1])), ("B", String(means[2])), ("A", String(means[3]))])
    }

    /// A JSON object of already-written values, in the order given.
    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { quoted($0.0) + ": " + $0.1 }.joined(separator: ", ") + "}"
    }

    /// A JSON string: quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// A share rounded to six decimals.
    private static func number(_ value: Double) -> String {
        String((value * 1_000_000).rounded() / 1_000_000)
    }
}

/// BlurHash (Wolt's specification, blurha.sh): the image's colours as `componentsX` by
/// `componentsY` cosine components in linear light, the first (the average) in sRGB, the others
/// quantised against the largest, in base 83.
enum BlurHash {
    static func encode(_ pixels: PixelBuffer, componentsX: Int, componentsY: Int) -> String {
        let width = pixels.width
        let height = pixels.height
        let bytes = pixels.bytes
        let linear = (0...255).map { sRGBToLinear($0) }
        // The cosines of each axis once: x by component, then y by component.
        let cosinesX = (0..<componentsX).map { i in (0..<width).map { cos(Double.pi * Double(i) * Double($0) / Double(width)) } }
        let cosinesY = (0..<componentsY).map { j in (0..<height).map { cos(Double.pi * Double(j) * Double($0) / Double(height)) } }
        var factors: [(Double, Double, Double)] = []
        for j in 0..<componentsY {
            for i in 0..<componentsX {
                var (red, green, blue) = (0.0, 0.0, 0.0)
                for y in 0..<height {
                    let row = y * width * 4
                    let cosineY = cosinesY[j][y]
                    for x in 0..<width {
                        let basis = cosinesX[i][x] * cosineY
                        red += basis * linear[Int(bytes[row + x * 4])]
                        green += basis * linear[Int(bytes[row + x * 4 + 1])]
                        blue += basis * linear[Int(bytes[row + x * 4 + 2])]
                    }
                }
                let scale = (i == 0 && j == 0 ? 1.0 : 2.0) / Double(width * height)
                factors.append((red * scale, green * scale, blue * scale))
            }
        }
        var hash = base83((componentsX - 1) + (componentsY - 1) * 9, length: 1)
        let ac = factors.dropFirst()
        let maximum: Double
        if ac.isEmpty {
            maximum = 1
            hash += base83(0, length: 1)
        } else {
            let largest = ac.map { max(abs($0.0), abs($0.1), abs($0.2)) }.max() ?? 0
            let quantised = Int(max(0, min(82, (largest * 166 - 0.5).rounded(.down))))
            maximum = Double(quantised + 1) / 166
            hash += base83(quantised, length: 1)
        }
        let dc = factors[0]
        hash += base83((linearToSRGB(dc.0) << 16) + (linearToSRGB(dc.1) << 8) + linearToSRGB(dc.2), length: 4)
        for factor in ac {
            func quantise(_ value: Double) -> Int {
                let scaled = value / maximum
                let signedRoot = (scaled < 0 ? -1.0 : 1.0) * abs(scaled).squareRoot()
                return Int(max(0, min(18, (signedRoot * 9 + 9.5).rounded(.down))))
            }
            hash += base83(quantise(factor.0) * 19 * 19 + quantise(factor.1) * 19 + quantise(factor.2), length: 2)
        }
        return hash
    }

    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    static func base83(_ value: Int, length: Int) -> String {
        var digits: [Character] = []
        var power = 1
        for _ in 1..<max(1, length) { power *= 83 }
        for _ in 0..<length {
            digits.append(alphabet[(value / power) % 83])
            power /= 83
        }
        return String(digits)
    }

    private static func sRGBToLinear(_ value: Int) -> Double {
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    private static func linearToSRGB(_ value: Double) -> Int {
        let v = max(0, min(1, value))
        return v <= 0.0031308 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }
}

/// ThumbHash (Evan Wallace's specification, evanw.github.io/thumbhash): an image of at most
/// 100x100 as its average colour and a few cosine components of luminance, two chroma channels
/// and alpha, in about 25 bytes. Rounding is JavaScript's `Math.round` (half up), as the
/// reference encoder's.
enum ThumbHash {
    /// The hash's bytes. `pixels` must be at most 100 pixels a side.
    static func encode(_ pixels: PixelBuffer) -> [UInt8] {
        let width = pixels.width
        let height = pixels.height
        let count = width * height
        let bytes = pixels.bytes
        var (averageR, averageG, averageB, averageA) = (0.0, 0.0, 0.0, 0.0)
        for index in 0..<count {
            let alpha = Double(bytes[index * 4 + 3]) / 255
            averageR += alpha / 255 * Double(bytes[index * 4])
            averageG += alpha / 255 * Double(bytes[index * 4 + 1])
            averageB += alpha / 255 * Double(bytes[index * 4 + 2])
            averageA += alpha
        }
        if averageA > 0 {
            averageR /= averageA
            averageG /= averageA
            averageB /= averageA
        }
        let hasAlpha = averageA < Double(count)
        let limit = hasAlpha ? 5.0 : 7.0
        let longer = Double(max(width, height))
        let lx = max(1, round(limit * Double(width) / longer))
        let ly = max(1, round(limit * Double(height) / longer))
        var (l, p, q, a) = ([Double](), [Double](), [Double](), [Double]())
        for index in 0..<count {
            let alpha = Double(bytes[index * 4 + 3]) / 255
            let r = averageR * (1 - alpha) + alpha / 255 * Double(bytes[index * 4])
            let g = averageG * (1 - alpha) + alpha / 255 * Double(bytes[index * 4 + 1])
            let b = averageB * (1 - alpha) + alpha / 255 * Double(bytes[index * 4 + 2])
            l.append((r + g + b) / 3)
            p.append((r + g) / 2 - b)
            q.append(r - g)
            a.append(alpha)
        }
        let (lDC, lAC, lScale) = channel(l, width: width, height: height, nx: max(3, lx), ny: max(3, ly))
        let (pDC, pAC, pScale) = channel(p, width: width, height: height, nx: 3, ny: 3)
        let (qDC, qAC, qScale) = channel(q, width: width, height: height, nx: 3, ny: 3)
        let (aDC, aAC, aScale) = hasAlpha ? channel(a, width: width, height: height, nx: 5, ny: 5) : (1, [], 1)
        let isLandscape = width > height
        let header24 =
            round(63 * lDC) | (round(31.5 + 31.5 * pDC) << 6) | (round(31.5 + 31.5 * qDC) << 12) | (round(31 * lScale) << 18)
            | ((hasAlpha ? 1 : 0) << 23)
        let header16 = (isLandscape ? ly : lx) | (round(63 * pScale) << 3) | (round(63 * qScale) << 9) | ((isLandscape ? 1 : 0) << 15)
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8((header24 >> 8) & 255), UInt8(header24 >> 16), UInt8(header16 & 255), UInt8(header16 >> 8),
        ]
        if hasAlpha { hash.append(UInt8(round(15 * aDC) | (round(15 * aScale) << 4))) }
        var isHighNibble = false
        for components in hasAlpha ? [lAC, pAC, qAC, aAC] : [lAC, pAC, qAC] {
            for factor in components {
                let nibble = UInt8(round(15 * factor))
                if isHighNibble { hash[hash.count - 1] |= nibble << 4 } else { hash.append(nibble) }
                isHighNibble.toggle()
            }
        }
        return hash
    }

    /// JavaScript's `Math.round`: half up.
    private static func round(_ value: Double) -> Int { Int((value + 0.5).rounded(.down)) }

    /// One channel's DC, its AC components mapped to 0...1 around 0.5, and their scale: the
    /// components whose `cx * ny < nx * (ny - cy)`, rows first.
    private static func channel(_ values: [Double], width: Int, height: Int, nx: Int, ny: Int) -> (Double, [Double], Double) {
        var dc = 0.0
        var ac: [Double] = []
        var scale = 0.0
        for cy in 0..<ny {
            var cx = 0
            while cx * ny < nx * (ny - cy) {
                let fx = (0..<width).map { cos(Double.pi / Double(width) * Double(cx) * (Double($0) + 0.5)) }
                var sum = 0.0
                for y in 0..<height {
                    let fy = cos(Double.pi / Double(height) * Double(cy) * (Double(y) + 0.5))
                    for x in 0..<width { sum += values[x + y * width] * fx[x] * fy }
                }
                sum /= Double(width * height)
                if cx > 0 || cy > 0 {
                    ac.append(sum)
                    scale = max(scale, abs(sum))
                } else {
                    dc = sum
                }
                cx += 1
            }
        }
        if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
        return (dc, ac, scale)
    }
}

extension PixelBuffer {
    /// The pixels resized by `factor` (Lanczos 3), each side rounded and at least one pixel; the
    /// same buffer when the size would not change.
    func resized(by factor: Double) -> PixelBuffer {
        let width = Swift.max(1, Int((Double(self.width) * factor).rounded()))
        let height = Swift.max(1, Int((Double(self.height) * factor).rounded()))
        guard width != self.width || height != self.height else { return self }
        let resized = ResizingTransformer(width: width, height: height, mode: .fill, filter: .lanczos3).transform(
            Image(pixels: self), forKey: "")
        return resized?.frames.first?.pixels ?? self
    }
}
