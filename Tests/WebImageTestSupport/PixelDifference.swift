package import WebImage

/// The largest difference of any colour channel between two images of the same size (alpha
/// left out); `Int.max` when their sizes differ.
package func largestChannelDifference(_ ours: PixelBuffer, _ theirs: PixelBuffer) -> Int {
    guard ours.width == theirs.width, ours.height == theirs.height else { return .max }
    var worst = 0
    for index in 0..<ours.bytes.count where index % 4 != 3 {
        worst = max(worst, abs(Int(ours.bytes[index]) - Int(theirs.bytes[index])))
    }
    return worst
}
