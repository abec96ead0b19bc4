package import Foundation

/// The small image files checked in under `Tests/WebImageTestSupport/Fixtures`
/// (made by `scripts/fixtures/make_fixtures.py`).
package enum Fixture {
    package static func url(_ name: String) -> URL {
        Bundle.module.url(forResource: "Fixtures/" + name, withExtension: nil)!
    }

    package static func data(_ name: String) throws -> Data {
        try Data(contentsOf: url(name))
    }

    /// A fixture directory's `expected.json`: each file's reference reading by name, empty when
    /// unreadable (a test over its keys then has no arguments, and the file-level tests fail).
    package static func manifest<Expectation: Decodable>(_ directory: String) -> [String: Expectation] {
        (try? JSONDecoder().decode([String: Expectation].self, from: data(directory + "/expected.json"))) ?? [:]
    }
}

/// A reference decoder's reading of a still image, as straight RGBA (BMP, HEIF and SVG fixtures).
package struct RGBAExpectation: Decodable {
    package let width: Int
    package let height: Int
    package let rgba: [UInt8]
}
