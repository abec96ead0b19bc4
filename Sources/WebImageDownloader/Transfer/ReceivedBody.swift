import Foundation
import NIOCore
import NIOFoundationCompat

/// A response body as its pieces arrive. A body that comes in one piece, the usual case for an
/// image on a fast connection, is kept as that piece and handed over without a copy; from the
/// second piece on, the pieces are copied once into `Data` sized from the expected length.
struct ReceivedBody {
    /// A lone piece shares the receive buffer it was read into, which is at most 64 KiB: from
    /// this size on, that costs at most four times the body, and saves copying it.
    private static let smallestShared = 16 * 1024

    private var lonePiece: ByteBuffer?
    private var joined: Data
    private let expectedSize: Int?
    /// The bytes received, the resumed prefix included.
    private(set) var count: Int

    /// A body that continues `prefix` (a resumed download's kept bytes) and expects
    /// `expectedSize` bytes in all, when the head said so.
    init(prefix: Data = Data(), expectedSize: Int? = nil) {
        joined = prefix
        count = prefix.count
        self.expectedSize = expectedSize
    }

    mutating func append(_ piece: ByteBuffer) {
        count += piece.readableBytes
        if lonePiece == nil, joined.isEmpty {
            lonePiece = piece
            return
        }
        joined.reserveCapacity(max(expectedSize ?? 0, count))
        if let first = lonePiece.take() { Self.copy(first, into: &joined) }
        Self.copy(piece, into: &joined)
    }

    /// The bytes so far.
    var data: Data {
        guard let lonePiece else { return joined }
        let strategy: ByteBuffer.ByteTransferStrategy = lonePiece.readableBytes >= Self.smallestShared ? .noCopy : .copy
        return lonePiece.getData(at: lonePiece.readerIndex, length: lonePiece.readableBytes, byteTransferStrategy: strategy) ?? Data()
    }

    private static func copy(_ piece: ByteBuffer, into data: inout Data) {
        piece.withUnsafeReadableBytes { data.append($0.assumingMemoryBound(to: UInt8.self)) }
    }
}
