import Foundation
import Testing
@testable import WebImage
@testable import WebImageCodecs
import WebImageTestSupport

@Suite("EXIF orientation")
struct ExifReaderTests {
    /// A JPEG start, one APP1 segment holding `tiff` after the Exif signature, and an end.
    private func jpeg(tiff: [UInt8]) -> [UInt8] {
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + [0xFF, 0xD9]
    }

    private func orientation(_ bytes: [UInt8]) -> ExifOrientation? {
        bytes.withUnsafeBytes { ExifReader.orientation(inJPEG: $0) }
    }

    @Test("the orientation written by Pillow is read, and the decoder reports it")
    func fixture() throws {
        let data = try Fixture.data("oriented-right.jpg")
        #expect(data.withUnsafeBytes { ExifReader.orientation(inJPEG: $0) } == .right)
        let image = try JPEGCoder().decode(data, options: DecodeOptions())
        #expect(image.orientation == .right && image.orientation.swapsDimensions)
        #expect(try JPEGCoder().decode(try Fixture.data("gradient.jpg"), options: DecodeOptions()).orientation == .up)
    }

    @Test("both byte orders")
    func byteOrders() {
        let bigEndian: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0]
        let littleEndian: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]
        #expect(orientation(jpeg(tiff: bigEndian)) == .left)
        #expect(orientation(jpeg(tiff: littleEndian)) == .down)
    }

    @Test("malformed or missing EXIF gives nothing, never a crash")
    func malformed() {
        #expect(orientation([]) == nil)
        #expect(orientation([0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF]) == nil, "a length past the end")
        #expect(orientation(jpeg(tiff: [0x49, 0x49, 42, 0, 0xFF, 0xFF, 0, 0])) == nil, "an IFD offset past the end")
        #expect(orientation(jpeg(tiff: [0x41, 0x41, 42, 0, 8, 0, 0, 0])) == nil, "no byte order mark")
        #expect(
            orientation(jpeg(tiff: [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 9, 0, 0, 0])) == nil,
            "9 is no orientation")
    }
}
