import Foundation
import Testing
import WebImage
import WebImageServer

/// imgproxy's environment value tests as ours: `env/types_test.go` at v4 (eef3b312), each of its
/// value types read through a variable imgproxy declares with that type (`security/config.go`,
/// `server/config.go`, `logger/config.go`, `options/parser/config.go`, `processing/config.go`)
/// and translated here. `TestURLPath` has no counterpart: no variable imgproxy reads at v4 is a URL
/// path (`IMGPROXY_PATH_PREFIX` is a plain string there). `TestDurationMillis` concerns
/// `OTEL_EXPORTER_OTLP_*_TIMEOUT`, which swift-otel reads itself.
@Suite("imgproxy's tables: environment value types (env/types_test.go)")
struct ImgproxyEnvironmentTypeTableTests {
    private func translated(_ name: String, _ value: String, beside others: [String: String] = [:]) throws -> String? {
        let target = try #require(
            {
                if case .mapped(let target, _)? = ImgproxyVariables.support[name] { return target }
                return nil
            }())
        return try ImgproxyVariables(environment: others.merging([name: value]) { $1 }).translate().variables[target]
    }

    private func refused(_ name: String, _ value: String) -> Bool {
        (try? translated(name, value)) == nil
    }

    /// `TestBool`, on `IMGPROXY_USE_ETAG` (an `env.Bool`).
    @Test("TestBool: true, false, 1, 0; anything else refused")
    func bool() throws {
        #expect(try translated("IMGPROXY_USE_ETAG", "true") == "true")
        #expect(try translated("IMGPROXY_USE_ETAG", "false") == "false")
        #expect(try translated("IMGPROXY_USE_ETAG", "1") == "true")
        #expect(try translated("IMGPROXY_USE_ETAG", "0") == "false")
        #expect(refused("IMGPROXY_USE_ETAG", "invalid"))
    }

    /// `TestFloat` and `TestMegaInt`, on `IMGPROXY_MAX_SRC_RESOLUTION` (an `env.MegaInt`: megapixels,
    /// which the server keeps as a number of megapixels).
    @Test("TestFloat and TestMegaInt: 3.14, 42, 1.5, 2, 0.5; not a number refused")
    func megapixels() throws {
        #expect(try translated("IMGPROXY_MAX_SRC_RESOLUTION", "3.14") == "3.14")
        #expect(try translated("IMGPROXY_MAX_SRC_RESOLUTION", "42") == "42.0")
        #expect(try translated("IMGPROXY_MAX_SRC_RESOLUTION", "1.5") == "1.5")
        #expect(try translated("IMGPROXY_MAX_SRC_RESOLUTION", "2") == "2.0")
        #expect(try translated("IMGPROXY_MAX_SRC_RESOLUTION", "0.5") == "0.5")
        #expect(refused("IMGPROXY_MAX_SRC_RESOLUTION", "not-a-number"))
        #expect(refused("IMGPROXY_MAX_SRC_RESOLUTION", "invalid"))
    }

    /// `TestInt`, on `IMGPROXY_AVIF_SPEED` (an `env.Int`); a negative one is read as it is and
    /// judged by the setting's own range when the server starts.
    @Test("TestInt: 42, -1; not a number refused")
    func int() throws {
        #expect(try translated("IMGPROXY_AVIF_SPEED", "42") == "42")
        #expect(try translated("IMGPROXY_AVIF_SPEED", "-1") == "-1")
        #expect(refused("IMGPROXY_AVIF_SPEED", "not-a-number"))
    }

    /// `TestDuration`, on `IMGPROXY_DOWNLOAD_TIMEOUT` (an `env.Duration`: whole seconds).
    @Test("TestDuration: 30 is thirty seconds; not a number refused")
    func duration() throws {
        #expect(try translated("IMGPROXY_DOWNLOAD_TIMEOUT", "30") == "30")
        #expect(refused("IMGPROXY_DOWNLOAD_TIMEOUT", "not-a-number"))
    }

    /// `TestEnum`, on `IMGPROXY_LOG_LEVEL` (an `env.Enum`, matched without case).
    @Test("TestEnum: names in any case; another name refused")
    func enumeration() throws {
        #expect(try translated("IMGPROXY_LOG_LEVEL", "debug") == "debug")
        #expect(try translated("IMGPROXY_LOG_LEVEL", "ERROR") == "error")
        #expect(try translated("IMGPROXY_LOG_LEVEL", "WaRn") == "warning")
        #expect(refused("IMGPROXY_LOG_LEVEL", "invalid"))
    }

    /// `TestStringSlice`, on `IMGPROXY_ALLOWED_SOURCES` (an `env.StringSlice`); its empty row is
    /// the variable unset.
    @Test("TestStringSlice: split on commas and trimmed; empty is unset")
    func stringSlice() throws {
        #expect(try translated("IMGPROXY_ALLOWED_SOURCES", "one,two,three") == "one,two,three")
        #expect(try translated("IMGPROXY_ALLOWED_SOURCES", " one , two , three ") == "one,two,three")
        #expect(try translated("IMGPROXY_ALLOWED_SOURCES", "single") == "single")
        #expect(try translated("IMGPROXY_ALLOWED_SOURCES", "") == nil)
    }

    /// `TestStringSliceSep`, on `IMGPROXY_PRESETS` and `IMGPROXY_PRESETS_SEPARATOR` (an
    /// `env.StringSliceSep`): the presets are handed on comma-separated.
    @Test("TestStringSliceSep: |, the default comma, ; with spaces; empty is unset")
    func stringSliceSeparator() throws {
        #expect(try translated("IMGPROXY_PRESETS", "a=w:1|b=w:2|c=w:3", beside: ["IMGPROXY_PRESETS_SEPARATOR": "|"]) == "a=w:1,b=w:2,c=w:3")
        #expect(try translated("IMGPROXY_PRESETS", "a=w:1,b=w:2,c=w:3") == "a=w:1,b=w:2,c=w:3")
        #expect(
            try translated("IMGPROXY_PRESETS", " a=w:1 ; b=w:2 ; c=w:3 ", beside: ["IMGPROXY_PRESETS_SEPARATOR": ";"])
                == "a=w:1,b=w:2,c=w:3")
        #expect(try translated("IMGPROXY_PRESETS", "") == nil)
    }

    /// `TestImageTypes`, on `IMGPROXY_PREFERRED_FORMATS` (an `env.ImageTypes`): names trimmed,
    /// an unknown one refused when the server reads the list (`unknown image format` there,
    /// naming the setting and the format here).
    @Test("TestImageTypes: jpg,png,webp with or without spaces; an unknown format refused")
    func imageTypes() throws {
        #expect(try translated("IMGPROXY_PREFERRED_FORMATS", "jpg,png,webp") == "jpg,png,webp")
        #expect(try translated("IMGPROXY_PREFERRED_FORMATS", " jpg , png , webp ") == "jpg,png,webp")
        func formats(_ value: String) throws -> [ImageFormat] {
            let environment = ["IMGPROXY_PREFERRED_FORMATS": value, "WEBIMAGE_ALLOW_UNSIGNED": "true"]
            return try ServeSettings(arguments: [], environment: environment).configuration.preferredFormats
        }
        #expect(try formats(" jpg , png , webp ") == [.jpeg, .png, .webP])
        #expect(throws: (any Error).self) { try formats("jpg,unknown,png") }
    }
}
