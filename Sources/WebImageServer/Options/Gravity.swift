import WebImage

/// Where a crop or an extension anchors the image (imgproxy's `gravity`): a compass point with
/// offsets in pixels, a focus point given as fractions of the image, or `sm`, the most detailed
/// region (``SmartCroppingTransformer``).
public struct Gravity: Sendable, Hashable {
    /// The anchor.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
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
    public var kind: Kind
    /// A compass point's horizontal offset in pixels (towards the centre), or a focus point's
    /// x as a fraction of the width, 0...1.
    public var x: Double
    /// A compass point's vertical offset, or a focus point's y, 0...1.
    public var y: Double

    /// A gravity.
    public init(_ kind: Kind, x: Double = 0, y: Double = 0) {
        self.kind = kind
        self.x = x
        self.y = y
    }

    /// The centre, imgproxy's default.
    public static let center = Gravity(.center)

    /// The canonical text: `ce`, `no:10:0`, `fp:0.5:0.25`, `sm`.
    var canonical: String {
        switch kind {
        case .smart: kind.rawValue
        case .focusPoint: "fp:\(TransformSpec.format(x)):\(TransformSpec.format(y))"
        default: x == 0 && y == 0 ? kind.rawValue : "\(kind.rawValue):\(TransformSpec.format(x)):\(TransformSpec.format(y))"
        }
    }

    /// Where a `width` x `height` window goes inside a `outerWidth` x `outerHeight` area
    /// (its top-left corner), clamped so that it stays inside. Smart gravity places it centred;
    /// the smart crop is made by its own transformer.
    func origin(width: Int, height: Int, outerWidth: Int, outerHeight: Int) -> (x: Int, y: Int) {
        let slackX = outerWidth - width
        let slackY = outerHeight - height
        let offsetX = Int(x.rounded())
        let offsetY = Int(y.rounded())
        let left: Int
        let top: Int
        if kind == .focusPoint {
            left = Int((x * Double(outerWidth) - Double(width) / 2).rounded())
            top = Int((y * Double(outerHeight) - Double(height) / 2).rounded())
        } else {
            // The names spell the edges: `no`/`so` pin the top or bottom, `we`/`ea` the left or
            // right; `ce` and `sm` pin neither and centre.
            let name = kind.rawValue
            left = name.hasSuffix("we") ? offsetX : name.hasSuffix("ea") ? slackX - offsetX : slackX / 2 + offsetX
            top = name.hasPrefix("no") ? offsetY : name.hasPrefix("so") ? slackY - offsetY : slackY / 2 + offsetY
        }
        let clampedX = slackX >= 0 ? min(max(0, left), slackX) : slackX / 2
        let clampedY = slackY >= 0 ? min(max(0, top), slackY) : slackY / 2
        return (clampedX, clampedY)
    }
}
