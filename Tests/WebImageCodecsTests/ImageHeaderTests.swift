import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

@Suite("ImageHeader")
struct ImageHeaderTests {
    @Test(
        "reads the size of every fixture format",
        arguments: [
            ("gradient.jpg", ImageFormat.jpeg, 64, 48, false),
            ("gradient-progressive.jpg", .jpeg, 64, 48, true),
            ("gradient-rgba.png", .png, 64, 48, false),
            ("gradient-interlaced.png", .png, 64, 48, true),
            ("animated.gif", .gif, 32, 24, false),
            ("gradient-lossy.webp", .webP, 64, 48, false),
            ("gradient-lossless.webp", .webP, 64, 48, false),
        ])
    func fixtureHeaders(name: String, format: ImageFormat, width: Int, height: Int, progressive: Bool) throws {
        let header = try ImageHeader(data: try Fixture.data(name))
        #expect(header.format == format)
        #expect(header.width == width)
        #expect(header.height == height)
        #expect(header.pixelCount == width * height)
        #expect(header.isProgressive == progressive)
    }

    @Test(
        "a header cut off is a decode failure, not a crash",
        arguments: [
            ("gradient.jpg", 9), ("gradient-rgba.png", 20), ("animated.gif", 9), ("gradient-lossy.webp", 14),
        ])
    func truncated(name: String, length: Int) throws {
        let data = try Fixture.data(name).prefix(length)
        #expect(throws: WebImageError(.decodeFailed)) { try ImageHeader(data: data) }
    }

    @Test("a corrupt JPEG header reports libjpeg's reason")
    func corruptJPEG() {
        // A start-of-frame marker whose segment length (2) is too short to hold a frame header.
        let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x02] + [UInt8](repeating: 0, count: 64)
        do {
            _ = try ImageHeader(data: bytes)
            Issue.record("a corrupt header cannot be read")
        } catch {
            #expect(error.code == .decodeFailed)
            #expect(error.message?.isEmpty == false)
        }
    }

    @Test("not an image, or no header reader for the format")
    func unreadable() {
        #expect(throws: WebImageError(.notAnImage)) { try ImageHeader(data: Array("<html>".utf8)) }
        #expect(throws: WebImageError(.unsupportedFormat)) { try ImageHeader(data: Array("%PDF-1.7\n".utf8)) }
        #expect(throws: WebImageError(.decodeFailed)) { try ImageHeader(data: [0xFF, 0x0A, 0xFA, 0x7F, 0, 0, 0, 0]) }  // a broken JPEG XL
    }
}
