/// A colour with straight (not premultiplied) 8-bit channels, as people write colours.
public struct RGBAColor: Sendable, Hashable, CustomStringConvertible {
    /// Red, 0...255.
    public var red: UInt8
    /// Green, 0...255.
    public var green: UInt8
    /// Blue, 0...255.
    public var blue: UInt8
    /// Opacity, 0 (transparent) ... 255 (opaque).
    public var alpha: UInt8

    /// Creates a colour.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Parses `#RRGGBB` or `#RRGGBBAA` (the `#` is optional); nil for anything else.
    public init?(hex: String) {
        let digits = hex.hasPrefix("#") ? hex.dropFirst() : Substring(hex)
        guard digits.count == 6 || digits.count == 8, let value = UInt32(digits, radix: 16), !digits.hasPrefix("+"), !digits.hasPrefix("-")
        else {
            return nil
        }
        let rgba = digits.count == 6 ? value << 8 | 0xFF : value
        self.init(red: UInt8(rgba >> 24), green: UInt8((rgba >> 16) & 0xFF), blue: UInt8((rgba >> 8) & 0xFF), alpha: UInt8(rgba & 0xFF))
    }

    /// `#rrggbb`, or `#rrggbbaa` when not opaque.
    public var hexString: String {
        let channels = alpha == 255 ? [red, green, blue] : [red, green, blue, alpha]
        return "#" + channels.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    public var description: String { hexString }

    /// The colour as premultiplied channels in 0...255.
    var premultiplied: SIMD4<Float> {
        let alpha = Float(self.alpha)
        return SIMD4(Float(red) * alpha / 255, Float(green) * alpha / 255, Float(blue) * alpha / 255, alpha)
    }

    /// Opaque black.
    public static let black = RGBAColor(red: 0, green: 0, blue: 0)
    /// Opaque white.
    public static let white = RGBAColor(red: 255, green: 255, blue: 255)
    /// Fully transparent.
    public static let clear = RGBAColor(red: 0, green: 0, blue: 0, alpha: 0)
}
