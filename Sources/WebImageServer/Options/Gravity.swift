import WebImage

/// Where a crop or an extension anchors the image (imgproxy's `gravity`): a compass point with
/// offsets in pixels, a focus point given as fractions of the image, or `sm`, the most detailed
/// region (`SmartCroppingTransformer`).
package struct Gravity: Sendable, Hashable {
    /// The anchor.
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        case center = "ce"
        case north = "no"
        case south = "so"
        case east = "ea"
        case west = "we"
        case northEast = "noea"
        case northWest = "nowe"
        case southEast = "soea"
        case southWest = "sowe"
        case smart = "sm"
        case focusPoint = "fp"
    }

    /// The anchor.
    package var kind: Kind
    /// A compass point's horizontal offset in pixels (towards the centre), or a focus point's
    /// x as a fraction of the width, 0...1.
    package var x: Double
    /// A compass point's vertical offset, or a focus point's y, 0...1.
    package var y: Double

    /// A gravity.
    package init(_ kind: Kind, x: Double = 0, y: Double = 0) {
        self.kind = kind
        self.x = x
        self.y = y
    }

    /// The centre, imgproxy's default.
    package static let center = Gravity(.center)

    /// The canonical text: `ce`, `no:10:0`, `fp:0.5:0.25`, `sm`.
    var canonical: String {
        switch kind {
        case .smart: kind.rawValue
        case .focusPoint: "fp:\(TransformSpec.format(x)):\(TransformSpec.format(y))"
        default: x == 0 && y == 0 ? kind.rawValue : "\(kind.rawValue):\(TransformSpec.format(x)):\(TransformSpec.format(y))"
        }
    }

    /// Where a `width` x `height` window goes inside a `outerWidth` x `outerHeight` area (its
    /// top-left corner), as imgproxy's `calcPosition` (`processing/calc_position.go`) puts it: a
    /// focus point at its share of the area (rounded half to even) less half the window; else
    /// centred at half the slack plus one, halved and rounded half to even, or against the edges
    /// the name spells (`no`/`so` the top or bottom, `we`/`ea` the left or right), moved by the
    /// offsets, which are pixels times `dpr` from 1 up and shares of the area below 1 (towards
    /// the centre from an edge). The window is kept inside, or with `allowsOverflow` at least one
    /// pixel of it in. Smart gravity places it centred; the smart crop is its own transformer.
    func origin(width: Int, height: Int, outerWidth: Int, outerHeight: Int, dpr: Double = 1, allowsOverflow: Bool = false)
        -> (x: Int, y: Int)
    {
        var left: Int
        var top: Int
        if kind == .focusPoint {
            left = Self.scaleToEven(outerWidth, x) - width / 2
            top = Self.scaleToEven(outerHeight, y) - height / 2
        } else {
            let offsetX = Self.offset(x, of: outerWidth, dpr: dpr)
            let offsetY = Self.offset(y, of: outerHeight, dpr: dpr)
            left = Self.halfToEven(outerWidth - width + 1) + offsetX
            top = Self.halfToEven(outerHeight - height + 1) + offsetY
            let name = kind.rawValue
            if name.hasPrefix("no") { top = offsetY }
            if name.hasSuffix("ea") { left = outerWidth - width - offsetX }
            if name.hasPrefix("so") { top = outerHeight - height - offsetY }
            if name.hasSuffix("we") { left = offsetX }
        }
        let (minimumX, maximumX) = allowsOverflow ? (1 - width, outerWidth - 1) : (0, outerWidth - width)
        let (minimumY, maximumY) = allowsOverflow ? (1 - height, outerHeight - 1) : (0, outerHeight - height)
        return (max(minimumX, min(left, maximumX)), max(minimumY, min(top, maximumY)))
    }

    /// An offset in pixels: from 1 up (either sign) pixels times `dpr`, below 1 a share of `side`,
    /// both rounded half to even.
    static func offset(_ value: Double, of side: Int, dpr: Double) -> Int {
        abs(value) >= 1 ? Int((value * dpr).rounded(.toNearestOrEven)) : scaleToEven(side, value)
    }

    /// imgproxy's `ScaleToEven`: `side * scale` rounded half to even, 0 for a 0 side.
    static func scaleToEven(_ side: Int, _ scale: Double) -> Int {
        side == 0 ? 0 : Int((Double(side) * scale).rounded(.toNearestOrEven))
    }

    /// imgproxy's `ShrinkToEven(value, 2)`: half of `value`, rounded half to even.
    static func halfToEven(_ value: Int) -> Int {
        Int((Double(value) / 2).rounded(.toNearestOrEven))
    }
}
