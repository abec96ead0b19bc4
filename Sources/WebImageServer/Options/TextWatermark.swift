import Foundation
import WebImage

/// imgproxy Pro's `watermark_text`/`wmt`: a watermark drawn from text with Pango markup, black
/// `sans 16` unless the markup says otherwise. Pango is not linked here; librsvg is, and draws
/// SVG text with Pango underneath, so the markup is turned into an SVG `<text>` whose `<tspan>`s
/// carry the same styles: `b`, `i`, `u`, `s`, `tt`, `big`, `small`, `sub`, `sup`, and `span`'s
/// `font`/`font_desc`, `font_family`/`face`, `size`/`font_size`, `weight`, `style`,
/// `foreground`/`fgcolor`/`color`, `alpha`/`fgalpha`, `underline`, `strikethrough` and
/// `letter_spacing`. Pango's other span attributes (a background colour, rise, gravity, font
/// features) draw nothing here; an element that is not Pango's, or markup that does not parse,
/// is a 400. A newline starts a line, as in Pango. Sizes are points at 72 dpi (libvips' text
/// default), so 16 points are 16 pixels. The drawing is cut to its ink (``ImageProcessor``).
enum TextWatermark {
    /// The SVG document for `markup`, its canvas large enough for the text at its largest size.
    static func svg(markup: String) throws(ProxyError) -> String {
        var converter = Converter()
        try converter.convert(markup)
        let size = converter.largestSize
        let lines = converter.lines
        let width = Int((Double(converter.longestLine + 2) * size).rounded(.up))
        let height = Int((Double(lines) * size * 1.5 + size).rounded(.up))
        let origin = number(size * 0.5)
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)">\
            <text x="\(origin)" y="\(number(size * 1.2))" font-family="sans" font-size="16" fill="#000000">\
            \(converter.output)</text></svg>
            """
    }

    /// A number in the SVG, to three decimals.
    static func number(_ value: Double) -> String { TransformSpec.format((value * 1000).rounded() / 1000) }

    /// Walks the markup once: tags become `tspan`s, text is escaped, each newline opens a
    /// `tspan` on the next line.
    private struct Converter {
        var output = ""
        var open: [String] = []
        /// The largest font size met, in pixels (16 unless the markup sets one larger).
        var largestSize = 16.0
        var lines = 1
        var longestLine = 0
        private var currentLine = 0

        mutating func convert(_ markup: String) throws(ProxyError) {
            var rest = Substring(markup)
            while let next = rest.firstIndex(of: "<") {
                try text(rest[..<next])
                guard let end = rest[next...].firstIndex(of: ">") else { throw failure("a tag is not closed") }
                try tag(rest[rest.index(after: next)..<end])
                rest = rest[rest.index(after: end)...]
            }
            try text(rest)
            guard open.isEmpty else { throw failure("<\(open.last ?? "")> is not closed") }
        }

        private mutating func text(_ raw: Substring) throws(ProxyError) {
            let decoded = try Self.unescaped(raw)
            for (index, line) in decoded.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if index > 0 {
                    lines += 1
                    currentLine = 0
                    output += "<tspan x=\"\(TextWatermark.number(largestSize * 0.5))\" dy=\"1.2em\">\(Self.escaped(line))</tspan>"
                } else {
                    output += Self.escaped(line)
                }
                currentLine += line.count
                longestLine = max(longestLine, currentLine)
            }
        }

        private mutating func tag(_ body: Substring) throws(ProxyError) {
            if body.hasPrefix("/") {
                let name = body.dropFirst().trimmingCharacters(in: .whitespaces)
                guard open.last == name else { throw failure("</\(name)> closes nothing open") }
                open.removeLast()
                output += "</tspan>"
                return
            }
            let selfClosing = body.hasSuffix("/")
            let content = selfClosing ? body.dropLast() : body
            let name = String(content.prefix { !$0.isWhitespace })
            let attributes = try Self.attributes(content.dropFirst(name.count))
            var styles: [(String, String)]
            switch name {
            case "b": styles = [("font-weight", "bold")]
            case "i": styles = [("font-style", "italic")]
            case "u": styles = [("text-decoration", "underline")]
            case "s": styles = [("text-decoration", "line-through")]
            case "tt": styles = [("font-family", "monospace")]
            case "big": styles = [("font-size", "120%")]
            case "small": styles = [("font-size", "83%")]
            case "sub": styles = [("baseline-shift", "sub"), ("font-size", "83%")]
            case "sup": styles = [("baseline-shift", "super"), ("font-size", "83%")]
            case "span": styles = []
            default: throw failure("<\(name)> is not Pango markup")
            }
            if name != "span", !attributes.isEmpty { throw failure("<\(name)> takes no attributes") }
            for (key, value) in attributes { styles += try spanStyle(key, value) }
            if name == "big" { largestSize *= 1.2 }
            output += "<tspan" + styles.map { " \($0.0)=\"\(Self.escaped(Substring($0.1)))\"" }.joined() + (selfClosing ? "/>" : ">")
            if !selfClosing { open.append(name) }
        }

        /// The SVG presentation attributes of one `span` attribute.
        private mutating func spanStyle(_ key: String, _ value: String) throws(ProxyError) -> [(String, String)] {
            switch key {
            case "font", "font_desc": return try fontDescription(value)
            case "font_family", "face": return [("font-family", value)]
            case "size", "font_size": return [("font-size", try size(value))]
            case "weight", "font_weight": return [("font-weight", try Self.weight(value))]
            case "style", "font_style":
                guard ["normal", "italic", "oblique"].contains(value) else { throw failure("style \"\(value)\"") }
                return [("font-style", value)]
            case "foreground", "fgcolor", "color": return try Self.color(value)
            case "alpha", "fgalpha": return [("fill-opacity", try Self.alpha(value))]
            case "underline": return [("text-decoration", value == "none" ? "none" : "underline")]
            case "strikethrough": return [("text-decoration", value == "true" ? "line-through" : "none")]
            case "letter_spacing":
                guard let spacing = Double(value) else { throw failure("letter_spacing \"\(value)\"") }
                return [("letter-spacing", TextWatermark.number(spacing / 1024))]
            case "background", "bgcolor", "bgalpha", "rise", "font_features", "gravity", "gravity_hint", "lang", "variant",
                "stretch", "font_stretch", "fallback", "allow_breaks", "insert_hyphens", "show", "line_height", "text_transform",
                "segment", "font_scale", "baseline_shift", "overline", "overline_color", "underline_color", "strikethrough_color":
                return []
            default: throw failure("span has no attribute \(key)")
            }
        }

        /// Pango's `size`: 1024ths of a point, `Npt`, or a CSS keyword.
        private mutating func size(_ value: String) throws(ProxyError) -> String {
            let keywords: [String: Double] = [
                "xx-small": 0.6, "x-small": 0.75, "small": 0.89, "medium": 1, "large": 1.2, "x-large": 1.5, "xx-large": 2,
                "smaller": 0.83, "larger": 1.2,
            ]
            if let factor = keywords[value] {
                // Relative to whatever encloses it: the canvas is sized for the largest it can be.
                largestSize = max(largestSize, largestSize * factor)
                return value
            }
            let points: Double?
            if value.hasSuffix("pt") { points = Double(value.dropLast(2)) } else { points = Double(value).map { $0 / 1024 } }
            guard let points, points > 0, points <= 1000 else { throw failure("size \"\(value)\" is not a size up to 1000 points") }
            largestSize = max(largestSize, points)
            return TextWatermark.number(points)
        }

        /// `font_desc`: `[FAMILY] [STYLE...] [SIZE]`, as Pango reads a font description.
        private mutating func fontDescription(_ value: String) throws(ProxyError) -> [(String, String)] {
            var words = value.split(separator: " ").map(String.init)
            var styles: [(String, String)] = []
            if let last = words.last, let points = Double(last.hasSuffix("px") ? String(last.dropLast(2)) : last) {
                guard points > 0, points <= 1000 else { throw failure("font size \(last) is over 1000") }
                largestSize = max(largestSize, points)
                styles.append(("font-size", TextWatermark.number(points)))
                words.removeLast()
            }
            while let last = words.last?.lowercased() {
                if ["italic", "oblique"].contains(last) {
                    styles.append(("font-style", last))
                } else if let weight = try? Self.weight(last) {
                    styles.append(("font-weight", weight))
                } else {
                    break
                }
                words.removeLast()
            }
            if !words.isEmpty {
                styles.append(("font-family", words.joined(separator: " ").trimmingCharacters(in: CharacterSet(charactersIn: ","))))
            }
            return styles
        }

        private static func weight(_ value: String) throws(ProxyError) -> String {
            let names: [String: String] = [
                "ultralight": "200", "light": "300", "normal": "400", "book": "400", "medium": "500", "semibold": "600", "bold": "700",
                "ultrabold": "800", "heavy": "900", "thin": "100",
            ]
            if let weight = names[value.lowercased()] { return weight }
            guard let number = Int(value), (100...1000).contains(number) else { throw .badRequest("wmt: weight \"\(value)\"") }
            return String(number)
        }

        /// `#rgb`, `#rrggbb`, `#rrggbbaa` (the alpha as `fill-opacity`) or a colour name.
        private static func color(_ value: String) throws(ProxyError) -> [(String, String)] {
            if value.hasPrefix("#") {
                let digits = value.dropFirst()
                guard [3, 6, 8].contains(digits.count), digits.allSatisfy(\.isHexDigit) else {
                    throw .badRequest("wmt: colour \"\(value)\"")
                }
                guard digits.count == 8, let alpha = Int(digits.suffix(2), radix: 16) else { return [("fill", value)] }
                return [("fill", "#" + digits.prefix(6)), ("fill-opacity", TextWatermark.number(Double(alpha) / 255))]
            }
            guard !value.isEmpty, value.allSatisfy({ $0.isLetter }) else { throw .badRequest("wmt: colour \"\(value)\"") }
            return [("fill", value.lowercased())]
        }

        /// `N%` or 1...65535.
        private static func alpha(_ value: String) throws(ProxyError) -> String {
            if value.hasSuffix("%"), let percent = Double(value.dropLast()), (0...100).contains(percent) {
                return TextWatermark.number(percent / 100)
            }
            guard let level = Double(value), (1...65535).contains(level) else { throw .badRequest("wmt: alpha \"\(value)\"") }
            return TextWatermark.number(level / 65535)
        }

        /// `name="value"` or `name='value'` pairs.
        private static func attributes(_ text: Substring) throws(ProxyError) -> [(String, String)] {
            var pairs: [(String, String)] = []
            var rest = text.drop { $0.isWhitespace }
            while !rest.isEmpty {
                guard let equals = rest.firstIndex(of: "=") else { throw .badRequest("wmt: an attribute has no value") }
                let name = rest[..<equals].trimmingCharacters(in: .whitespaces)
                var value = rest[rest.index(after: equals)...].drop { $0.isWhitespace }
                guard let quote = value.first, quote == "\"" || quote == "'" else {
                    throw .badRequest("wmt: \(name)'s value is not quoted")
                }
                value = value.dropFirst()
                guard let close = value.firstIndex(of: quote) else { throw .badRequest("wmt: \(name)'s value is not closed") }
                pairs.append((name, try unescaped(value[..<close])))
                rest = value[value.index(after: close)...].drop { $0.isWhitespace }
            }
            return pairs
        }

        /// XML's five entities and numeric references resolved.
        static func unescaped(_ text: Substring) throws(ProxyError) -> String {
            // XML has no place for control characters but tab, newline and return: librsvg would refuse the document.
            guard !text.unicodeScalars.contains(where: { $0.value < 0x20 && ![0x09, 0x0A, 0x0D].contains($0.value) }) else {
                throw .badRequest("wmt: the text holds a control character")
            }
            guard text.contains("&") else { return String(text) }
            var result = ""
            var rest = text
            while let ampersand = rest.firstIndex(of: "&") {
                result += rest[..<ampersand]
                guard let semicolon = rest[ampersand...].firstIndex(of: ";") else { throw .badRequest("wmt: an entity is not closed") }
                let name = rest[rest.index(after: ampersand)..<semicolon]
                let named: [Substring: String] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
                if let character = named[name] {
                    result += character
                } else if name.hasPrefix("#"),
                    let code = name.hasPrefix("#x") ? UInt32(name.dropFirst(2), radix: 16) : UInt32(name.dropFirst()),
                    let scalar = Unicode.Scalar(code), code >= 0x20 || [0x09, 0x0A, 0x0D].contains(code)
                {
                    result.unicodeScalars.append(scalar)
                } else {
                    throw .badRequest("wmt: unknown entity &\(name);")
                }
                rest = rest[rest.index(after: semicolon)...]
            }
            return result + rest
        }

        static func escaped(_ text: Substring) -> String {
            var result = ""
            for character in text {
                switch character {
                case "&": result += "&amp;"
                case "<": result += "&lt;"
                case ">": result += "&gt;"
                case "\"": result += "&quot;"
                case "'": result += "&apos;"
                default: result.append(character)
                }
            }
            return result
        }

        private func failure(_ reason: String) -> ProxyError { .badRequest("wmt: the markup is not Pango's: \(reason)") }
    }
}
