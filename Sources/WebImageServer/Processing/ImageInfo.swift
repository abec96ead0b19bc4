import Foundation
import WebImage

/// The JSON `/info` answers for a source's bytes (imgproxy Pro's "Getting an image info"):
/// `size`, `format`, `width`, `height` (as stored) with `orientation`, `exif` (exifread's names),
/// and on request `frames`, `color_profile`, `crop`, `average` and `blurhash`, in that order.
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
        guard options.page < image.frames.count else {
            throw .badRequest("page \(options.page) is past the source's \(image.frames.count) (page)")
        }
        let pixels = image.frames[options.page].pixels
        if let crop = options.crop { members.append(("crop", Self.cropPlace(crop, width: pixels.width, height: pixels.height))) }
        if options.average { members.append(("average", Self.average(pixels, ignoringTransparent: options.averageIgnoresTransparent))) }
        if let components = options.blurHash {
            members.append(("blurhash", Self.quoted(BlurHash.encode(pixels, componentsX: components.x, componentsY: components.y))))
        }
        return Self.object(members)
    }

    /// The crop's rectangle as shares of the image, placed as processing places it.
    static func cropPlace(_ crop: ProcessingOptions.Crop, width: Int, height: Int) -> String {
        func side(_ value: Double, _ whole: Int) -> Int {
            value < 1 ? max(1, Int((value * Double(whole)).rounded())) : min(whole, Int(value))
        }
        let cropWidth = side(crop.width, width)
        let cropHeight = side(crop.height, height)
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
