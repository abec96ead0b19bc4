import Dispatch
import Foundation

/// Splits work over rows into a few contiguous bands run on separate cores, when the work is
/// large enough to pay for the hand-off (below about a quarter megapixel, one thread is faster).
/// Each band fills its own bytes and the bands are joined in order, so no two threads ever write
/// to the same memory.
enum ParallelRows {
    static let bandsPerCore = 2
    static let minimumPixelsToSplit = 250_000

    /// The concatenation, in row order, of `body`'s output for disjoint bands covering `0..<rows`.
    static func map(rows: Int, pixelsPerRow: Int, _ body: @escaping @Sendable (Range<Int>) -> [UInt8]) -> [UInt8] {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard cores > 1, rows > 1, rows * pixelsPerRow >= minimumPixelsToSplit else { return body(0..<rows) }
        let bands = min(rows, cores * bandsPerCore)
        let results = Locked([[UInt8]](repeating: [], count: bands))
        DispatchQueue.concurrentPerform(iterations: bands) { band in
            let bytes = body(rows * band / bands..<rows * (band + 1) / bands)
            results.withLock { $0[band] = bytes }
        }
        return results.withLock { bands in
            var joined = [UInt8]()
            joined.reserveCapacity(rows * pixelsPerRow * 4)
            for band in bands { joined.append(contentsOf: band) }
            return joined
        }
    }

    /// `body` over every row, writing each row's `width` RGBA pixels through the pointer it gets.
    static func fill(rows: Int, width: Int, _ body: @escaping @Sendable (_ row: Int, _ output: UnsafeMutablePointer<UInt8>) -> Void)
        -> [UInt8]
    {
        map(rows: rows, pixelsPerRow: width) { band in
            var bytes = [UInt8](repeating: 0, count: band.count * width * 4)
            bytes.withUnsafeMutableBufferPointer { output in
                for row in band { body(row, output.baseAddress! + (row - band.lowerBound) * width * 4) }
            }
            return bytes
        }
    }
}
