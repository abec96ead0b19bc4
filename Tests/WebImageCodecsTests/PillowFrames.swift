import Foundation
import WebImageCodecs
import WebImageTestSupport

/// Pillow's decode of a fixture, written by scripts/fixtures/make_fixtures.py: every frame as
/// straight RGBA, for exact comparison.
struct PillowFrames: Decodable {
    struct Frame: Decodable {
        let duration: Int?
        let rgba: [UInt8]
    }

    let width: Int
    let height: Int
    let loop: Int
    let frames: [Frame]

    static func load(_ name: String) throws -> PillowFrames {
        try JSONDecoder().decode(PillowFrames.self, from: try Fixture.data(name))
    }

    /// Frame `index` premultiplied the way the library stores pixels.
    func pixels(_ index: Int) -> PixelBuffer {
        PixelBuffer(width: width, height: height, straightRGBA: frames[index].rgba)
    }
}
