/// `autoquality`/`aq:METHOD:TARGET:MIN:MAX:ERROR` (paid edition), the `size` method: the
/// highest quality in `minimum...maximum` whose result fits in `target` bytes, else `minimum`.
public struct Autoquality: Sendable, Equatable {
    /// The result's size in bytes.
    public var target: Int
    /// The lowest quality tried. imgproxy's default 70 (`IMGPROXY_AUTOQUALITY_MIN`).
    public var minimum = 70
    /// The highest. imgproxy's default 80 (`IMGPROXY_AUTOQUALITY_MAX`).
    public var maximum = 80

    /// The size method toward `target` bytes, with imgproxy Pro's default qualities.
    public init(target: Int) { self.target = target }
}
