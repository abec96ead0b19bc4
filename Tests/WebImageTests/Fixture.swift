import Foundation

/// The small image files checked in under `Tests/WebImageTests/Fixtures`
/// (made by `scripts/fixtures/make_fixtures.py`).
enum Fixture {
    static func url(_ name: String) -> URL {
        Bundle.module.url(forResource: "Fixtures/" + name, withExtension: nil)!
    }

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: url(name))
    }
}
