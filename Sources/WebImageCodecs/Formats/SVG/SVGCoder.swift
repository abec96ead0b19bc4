package import Foundation
import CRSVG

/// SVG through librsvg (Debian's 2.54, drawing with cairo), rasterised once at the size wanted:
/// a requested thumbnail's size (larger or smaller than the document's own: it is vector), else
/// the document's `width` and `height` at 96 pixels per inch, else its `viewBox`, else 300x150
/// (a browser's default for a replaced element). A size over the pixel limit is drawn smaller to
/// fit it, with a warning, since nothing is lost by drawing a vector smaller.
///
/// Nothing outside the document is ever loaded: librsvg is given no base URL, so it resolves no
/// `file:` or `http:` reference, XInclude or CSS `@import` (tested with a local file, `/etc/passwd`
/// and a loopback server); `data:` URLs inside the document are drawn.
/// Decoding only: nothing encodes SVG.
package struct SVGCoder: ImageCoder {
    /// What librsvg resolves lengths in inches, millimetres and points with: CSS's 96.
    static let dotsPerInch = 96.0
    /// The size a document without one is drawn at: CSS's default for replaced elements.
    static let defaultSize = (width: 300.0, height: 150.0)

    /// Creates the coder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .svg }
    public func canEncode(to format: ImageFormat) -> Bool { false }

    public func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        let document = try SVGDocument(data)
        let wanted = Self.renderedSize(of: document.size, thumbnail: options.thumbnail)
        let (width, height) = Self.fitted(wanted, within: options.limits.maximumPixelCount)
        try options.limits.check(width: width, height: height, inputSize: data.count)
        let pixels = try document.render(width: width, height: height)
        var image = Image(pixels: pixels, scale: options.scale, sourceFormat: .svg, hasAlpha: !pixels.isOpaque)
        // Compared as Doubles: the size wanted can be far past Int's range.
        if Double(width) != wanted.width || Double(height) != wanted.height {
            image.warnings.append("SVG drawn at \(width)x\(height), within the pixel limit and cairo's largest side")
        }
        return image
    }

    /// The size to draw at, in pixels (not yet rounded, and as large as the document says: a
    /// hostile one can say 10^19): the thumbnail's (fitted inside it when the aspect ratio is
    /// kept), else the document's own, rounded up.
    static func renderedSize(of size: (width: Double, height: Double), thumbnail: ThumbnailSize?) -> (width: Double, height: Double) {
        guard let thumbnail, thumbnail.width > 0, thumbnail.height > 0 else {
            return (max(1, size.width.rounded(.up)), max(1, size.height.rounded(.up)))
        }
        guard thumbnail.preservesAspectRatio else { return (Double(thumbnail.width), Double(thumbnail.height)) }
        let scale = min(Double(thumbnail.width) / size.width, Double(thumbnail.height) / size.height)
        return (max(1, (size.width * scale).rounded()), max(1, (size.height * scale).rounded()))
    }

    /// `size` in whole pixels, shrunk (ratio kept) to at most `maximumPixels` and sides of at most
    /// ``maximumSide``.
    static func fitted(_ size: (width: Double, height: Double), within maximumPixels: Int) -> (width: Int, height: Int) {
        let pixels = size.width * size.height
        let longest = max(size.width, size.height)
        guard pixels > Double(maximumPixels) || longest > Double(maximumSide) else { return (Int(size.width), Int(size.height)) }
        let shrink = min((Double(maximumPixels) / pixels).squareRoot(), Double(maximumSide) / longest)
        let side = { (length: Double) in max(1, Int(min(length * shrink, Double(maximumPixels)).rounded())) }
        // A side that shrank below one pixel keeps one, so the other is cut to the limit.
        let (width, height) = (side(size.width), side(size.height))
        return (min(width, maximumPixels / height, maximumSide), min(height, maximumPixels / width, maximumSide))
    }

    /// The longest side an SVG is drawn with: cairo's largest image surface side.
    public static let maximumSide = 32_767

    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        throw WebImageError(.unsupportedFormat, "SVGCoder only decodes")
    }
}

/// A parsed SVG document (a librsvg handle) and its size in CSS pixels.
final class SVGDocument {
    private let handle: UnsafeMutablePointer<RsvgHandle>
    let size: (width: Double, height: Double)

    init(_ data: Data) throws(WebImageError) {
        try SVGFontSizes.check(data)
        var error: UnsafeMutablePointer<GError>?
        let handle = data.withUnsafeBytes { bytes in
            rsvg_handle_new_from_data(bytes.bindMemory(to: guint8.self).baseAddress, gsize(bytes.count), &error)
        }
        guard let handle else { throw Self.failure(error, "unreadable") }
        self.handle = handle
        rsvg_handle_set_dpi(handle, SVGCoder.dotsPerInch)
        size = Self.size(of: handle)
        guard size.width.isFinite, size.height.isFinite, size.width > 0, size.height > 0 else {
            g_object_unref(gpointer(handle))
            throw WebImageError(.decodeFailed, "SVG: the document has no area")
        }
    }

    deinit { g_object_unref(gpointer(handle)) }

    private static func size(of handle: UnsafeMutablePointer<RsvgHandle>) -> (width: Double, height: Double) {
        var width = 0.0
        var height = 0.0
        if rsvg_handle_get_intrinsic_size_in_pixels(handle, &width, &height) != 0 { return (width, height) }
        var hasWidth: gboolean = 0
        var hasHeight: gboolean = 0
        var hasViewBox: gboolean = 0
        var lengths = (RsvgLength(), RsvgLength())
        var viewBox = RsvgRectangle()
        rsvg_handle_get_intrinsic_dimensions(handle, &hasWidth, &lengths.0, &hasHeight, &lengths.1, &hasViewBox, &viewBox)
        return hasViewBox != 0 ? (viewBox.width, viewBox.height) : SVGCoder.defaultSize
    }

    /// The document drawn into `width` x `height` pixels (stretched if the ratio differs).
    func render(width: Int, height: Int) throws(WebImageError) -> PixelBuffer {
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)),
            cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS
        else { throw WebImageError(.decodeFailed, "cairo could not make a \(width)x\(height) surface") }
        defer { cairo_surface_destroy(surface) }
        let context = cairo_create(surface)
        defer { cairo_destroy(context) }
        cairo_scale(context, Double(width) / size.width, Double(height) / size.height)
        var viewport = RsvgRectangle(x: 0, y: 0, width: size.width, height: size.height)
        var error: UnsafeMutablePointer<GError>?
        guard rsvg_handle_render_document(handle, context, &viewport, &error) != 0 else { throw Self.failure(error, "could not be drawn") }
        cairo_surface_flush(surface)
        let stride = Int(cairo_image_surface_get_stride(surface))
        guard let data = cairo_image_surface_get_data(surface) else { throw WebImageError(.decodeFailed, "cairo drew no pixels") }
        // cairo's ARGB32 is premultiplied, one native-endian 32-bit word per pixel: B, G, R, A in memory here.
        let premultiplied = [UInt8](unsafeUninitializedCapacity: try PixelBuffer.byteCount(width: width, height: height)) {
            buffer, initialized in
            for y in 0..<height {
                let row = data + y * stride
                for x in 0..<width {
                    let pixel = UInt32(littleEndian: UnsafeRawPointer(row + x * 4).loadUnaligned(as: UInt32.self))
                    let target = (y * width + x) * 4
                    buffer[target] = UInt8(truncatingIfNeeded: pixel >> 16)
                    buffer[target + 1] = UInt8(truncatingIfNeeded: pixel >> 8)
                    buffer[target + 2] = UInt8(truncatingIfNeeded: pixel)
                    buffer[target + 3] = UInt8(truncatingIfNeeded: pixel >> 24)
                }
            }
            initialized = width * height * 4
        }
        return PixelBuffer(width: width, height: height, premultipliedRGBA: premultiplied)
    }

    private static func failure(_ error: UnsafeMutablePointer<GError>?, _ what: String) -> WebImageError {
        defer { if let error { g_error_free(error) } }
        let message = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "no reason given"
        return WebImageError(.decodeFailed, "SVG \(what): \(message)")
    }
}

/// librsvg 2.54 aborts the whole process (a Rust panic it cannot unwind through C, "assertion
/// failed: h >= 0.0" in its text layout) on text whose font size overflows Pango's units, about two
/// million pixels: FuzzSVG found `font-size="14202080"`, and rsvg-convert dies on it too. So the
/// document's font sizes are bounded before librsvg sees it, assuming the worst: the largest
/// absolute size times every relative size above 1 (`em`, `%`, `larger`...) as if all were nested.
enum SVGFontSizes {
    /// The largest font size a document may reach, in pixels. Ten thousand: text far larger than
    /// any image the limits allow, and far below the overflow.
    static let maximum = 10_000.0

    static func check(_ data: Data) throws(WebImageError) {
        let text = String(decoding: data, as: UTF8.self).lowercased()
        var largest = 16.0
        var growth = 1.0
        for value in values(in: text) {
            switch value {
            case .absolute(let pixels): largest = max(largest, pixels)
            case .relative(let factor): growth *= max(1, factor)
            }
            guard largest * growth <= maximum else {
                throw WebImageError(.decodeFailed, "SVG: font sizes reach over \(Int(maximum)) pixels, which librsvg cannot lay out")
            }
        }
    }

    enum Size {
        case absolute(Double)
        case relative(Double)
    }

    /// Every size given to `font-size` or inside a `font` shorthand, as an attribute or in CSS.
    static func values(in text: String) -> [Size] {
        var sizes: [Size] = []
        var rest = Substring(text)
        while let range = rest.range(of: "font") {
            rest = rest[range.upperBound...]
            var value = rest.drop { $0 != ":" && $0 != "=" && $0 != ">" && $0 != "<" }
            guard value.first == ":" || value.first == "=" else { continue }
            value = value.dropFirst().drop { $0 == " " || $0 == "\"" || $0 == "'" }
            let end = value.firstIndex { $0 == ";" || $0 == "\"" || $0 == "'" || $0 == "}" || $0 == "<" || $0 == ">" } ?? value.endIndex
            sizes += parse(value[..<end])
        }
        return sizes
    }

    /// Whether an `e` at `index` starts an exponent (`1e6`, `2e+3`) rather than a unit (`2em`).
    static func isExponent(_ characters: [Character], at index: Int) -> Bool {
        guard characters[index] == "e", index + 1 < characters.count else { return false }
        let next = characters[index + 1]
        if next.isNumber { return true }
        return (next == "+" || next == "-") && index + 2 < characters.count && characters[index + 2].isNumber
    }

    /// The sizes in one property value: numbers with a unit, and the growing keywords.
    static func parse(_ value: Substring) -> [Size] {
        var sizes: [Size] = []
        let larger = value.components(separatedBy: "larger").count - 1
        sizes += Array(repeating: .relative(1.2), count: larger)
        for keyword in ["xx-large": 2.0, "xxx-large": 3, "x-large": 1.5] where value.contains(keyword.key) {
            sizes.append(.absolute(16 * keyword.value))
        }
        let characters = Array(value)
        var index = 0
        while index < characters.count {
            guard characters[index].isNumber || characters[index] == "." else {
                index += 1
                continue
            }
            var number = ""
            while index < characters.count, characters[index].isNumber || characters[index] == "." || isExponent(characters, at: index) {
                number.append(characters[index])
                if characters[index] == "e", characters[index + 1] == "+" || characters[index + 1] == "-" {
                    index += 1
                    number.append(characters[index])
                }
                index += 1
            }
            var unit = ""
            while index < characters.count, characters[index].isLetter || characters[index] == "%" {
                unit.append(characters[index])
                index += 1
            }
            guard let amount = Double(number), amount.isFinite else {
                sizes.append(.absolute(.infinity))
                continue
            }
            switch unit {
            case "em", "rem", "ex", "ch": sizes.append(.relative(amount))
            case "%": sizes.append(.relative(amount / 100))
            case "pt": sizes.append(.absolute(amount * 4 / 3))
            case "pc": sizes.append(.absolute(amount * 16))
            case "in": sizes.append(.absolute(amount * 96))
            case "cm": sizes.append(.absolute(amount * 96 / 2.54))
            case "mm": sizes.append(.absolute(amount * 96 / 25.4))
            case "q": sizes.append(.absolute(amount * 96 / 101.6))
            default: sizes.append(.absolute(amount))
            }
        }
        return sizes
    }
}
