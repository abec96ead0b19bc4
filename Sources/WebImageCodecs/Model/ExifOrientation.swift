/// How the stored pixels must be turned to show the image upright: the EXIF / TIFF orientation
/// tag, values 1 to 8.
public enum ExifOrientation: Int, Sendable, CaseIterable {
    /// 1: as stored.
    case up = 1
    /// 2: mirrored left to right.
    case upMirrored = 2
    /// 3: turned 180°.
    case down = 3
    /// 4: mirrored top to bottom.
    case downMirrored = 4
    /// 5: mirrored along the main diagonal.
    case leftMirrored = 5
    /// 6: stored turned 90° counter-clockwise; shown by turning it 90° clockwise.
    case right = 6
    /// 7: mirrored along the other diagonal.
    case rightMirrored = 7
    /// 8: stored turned 90° clockwise; shown by turning it 90° counter-clockwise.
    case left = 8

    /// Whether showing the image swaps its width and height.
    public var swapsDimensions: Bool {
        rawValue >= 5
    }
}
