/// Which corners of a rectangle (SDWebImage's `SDRectCorner`).
public struct RectCorners: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Top left.
    public static let topLeft = RectCorners(rawValue: 1 << 0)
    /// Top right.
    public static let topRight = RectCorners(rawValue: 1 << 1)
    /// Bottom left.
    public static let bottomLeft = RectCorners(rawValue: 1 << 2)
    /// Bottom right.
    public static let bottomRight = RectCorners(rawValue: 1 << 3)
    /// All four.
    public static let all: RectCorners = [.topLeft, .topRight, .bottomLeft, .bottomRight]

    /// Spec names, in key order.
    static let names: [(String, RectCorners)] = [("tl", .topLeft), ("tr", .topRight), ("bl", .bottomLeft), ("br", .bottomRight)]

    /// `all`, or the names of the corners joined with `+` (`tl+tr`).
    var specText: String {
        self == .all ? "all" : Self.names.filter { contains($0.1) }.map(\.0).joined(separator: "+")
    }
}
