import Foundation
import NIOCore
import Testing
@testable import WebImage
@testable import WebImageDownloader
import WebImageTestSupport

@Suite("ReceivedBody")
struct ReceivedBodyTests {
    private func piece(_ bytes: [UInt8]) -> ByteBuffer {
        ByteBuffer(bytes: bytes)
    }

    @Test("one piece, small or large, comes back whole; later pieces are joined in order")
    func pieces() {
        let small = [UInt8](repeating: 7, count: 100)
        let large = (0..<40_000).map { UInt8(truncatingIfNeeded: $0) }
        var one = ReceivedBody()
        one.append(piece(small))
        #expect(one.data == Data(small) && one.count == 100)
        var shared = ReceivedBody(expectedSize: large.count)
        shared.append(piece(large))
        #expect(shared.data == Data(large))
        var joined = ReceivedBody(expectedSize: large.count + small.count + 3)
        joined.append(piece(large))
        joined.append(piece(small))
        joined.append(piece([1, 2, 3]))
        #expect(joined.data == Data(large + small + [1, 2, 3]) && joined.count == large.count + small.count + 3)
        #expect(ReceivedBody().data.isEmpty)
    }

    @Test("a resumed body continues its kept prefix")
    func prefix() {
        var body = ReceivedBody(prefix: Data([9, 9]), expectedSize: 5)
        #expect(body.count == 2 && body.data == Data([9, 9]))
        body.append(piece([1, 2, 3]))
        #expect(body.data == Data([9, 9, 1, 2, 3]) && body.count == 5)
    }
}
