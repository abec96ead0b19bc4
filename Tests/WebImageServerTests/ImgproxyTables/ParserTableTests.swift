import Foundation
import Testing
import WebImage
@testable import WebImageServer

/// imgproxy's options parser tests as ours: `options/parser/processing_options_test.go` at v4
/// (eef3b312), `ProcessingOptionsTestSuite`, one test here per imgproxy test of the same name
/// (without `Test`), each path run through ``ProxyPath`` (after an `unsafe` signature segment,
/// which imgproxy's `ParsePath` is given without) and ``OptionsParser`` with the configuration
/// the imgproxy test sets. Two kinds of its tests do not hold here as written, each named
/// below: the `UsedPresets` list (not kept: nothing reads it), and the client-feature flags
/// (`PreferWebP`/`EnforceWebP` and AVIF's and JPEG XL's, which this server decides when it
/// chooses the result's format from `Accept`, not as options: `ServerHTTPTests` covers them).
@Suite("imgproxy's tables: the options parser (options/parser/processing_options_test.go)")
struct ImgproxyParserTableTests {
    static let origin = "http://images.dev/lorem/ipsum.jpg?param=value"
    static let plainOrigin = "http://images.dev/lorem/ipsum.jpg"
    static let replacements = [
        SourceRewriting.Replacement(pattern: "test://*/", replacement: "test2://images.dev/${1}/dolor/"),
        SourceRewriting.Replacement(pattern: "test2://", replacement: "http://"),
    ]

    static func base64(_ text: String) -> String { URLSigner.base64URL(Array(text.utf8)) }

    /// Go's `url.PathEscape`: every byte but the unreserved ones and `$&+:=@` escaped.
    static func pathEscaped(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~$&+:=@")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// The options and source of `path`, as imgproxy's `ParsePath` gives them.
    static func parse(
        _ path: String, rules: ProxyPath.Rules = ProxyPath.Rules(), parser: OptionsParser = OptionsParser(),
        hints: OptionsParser.ClientHints? = nil
    ) throws -> (options: ProcessingOptions, source: String) {
        let proxyPath = try ProxyPath(parsing: Substring("/unsafe" + path), rules: rules)
        let options = try parser.parse(proxyPath.options, extensionName: proxyPath.extensionName, hints: hints)
        return (options, proxyPath.source.absoluteString)
    }

    @Test("ParseBase64URL, ...WithFilename, ...WithoutExtension, ...WithBase, ...WithReplacement")
    func base64Sources() throws {
        var parsed = try Self.parse("/size:100:100/\(Self.base64(Self.origin)).png")
        #expect(parsed.source == Self.origin && parsed.options.format == .png)
        parsed = try Self.parse(
            "/size:100:100/\(Self.base64(Self.origin)).png/puppy.jpg", rules: ProxyPath.Rules(base64IncludesFilename: true))
        #expect(parsed.source == Self.origin && parsed.options.format == .png)
        parsed = try Self.parse("/size:100:100/\(Self.base64(Self.origin))")
        #expect(parsed.source == Self.origin && parsed.options.format == nil)
        let base = ProxyPath.Rules(rewriting: SourceRewriting(baseURL: "http://images.dev/"))
        parsed = try Self.parse("/size:100:100/\(Self.base64("lorem/ipsum.jpg?param=value")).png", rules: base)
        #expect(parsed.source == "http://images.dev/lorem/ipsum.jpg?param=value" && parsed.options.format == .png)
        let replacing = ProxyPath.Rules(rewriting: SourceRewriting(replacements: Self.replacements))
        parsed = try Self.parse("/size:100:100/\(Self.base64("test://lorem/ipsum.jpg?param=value")).png", rules: replacing)
        #expect(parsed.source == "http://images.dev/lorem/dolor/ipsum.jpg?param=value" && parsed.options.format == .png)
    }

    @Test("ParsePlainURL, ...WithoutExtension, ...Escaped, ...WithBase, ...WithReplacement, ...EscapedWithBase")
    func plainSources() throws {
        var parsed = try Self.parse("/size:100:100/plain/\(Self.plainOrigin)@png")
        #expect(parsed.source == Self.plainOrigin && parsed.options.format == .png)
        parsed = try Self.parse("/size:100:100/plain/\(Self.plainOrigin)")
        #expect(parsed.source == Self.plainOrigin && parsed.options.format == nil)
        parsed = try Self.parse("/size:100:100/plain/\(Self.pathEscaped(Self.origin))@png")
        #expect(parsed.source == Self.origin && parsed.options.format == .png)
        let base = ProxyPath.Rules(rewriting: SourceRewriting(baseURL: "http://images.dev/"))
        parsed = try Self.parse("/size:100:100/plain/lorem/ipsum.jpg@png", rules: base)
        #expect(parsed.source == "http://images.dev/lorem/ipsum.jpg" && parsed.options.format == .png)
        let replacing = ProxyPath.Rules(rewriting: SourceRewriting(replacements: Self.replacements))
        parsed = try Self.parse("/size:100:100/plain/test://lorem/ipsum.jpg@png", rules: replacing)
        #expect(parsed.source == "http://images.dev/lorem/dolor/ipsum.jpg" && parsed.options.format == .png)
        parsed = try Self.parse("/size:100:100/plain/\(Self.pathEscaped("lorem/ipsum.jpg?param=value"))@png", rules: base)
        #expect(parsed.source == "http://images.dev/lorem/ipsum.jpg?param=value" && parsed.options.format == .png)
    }

    @Test("ParseWithArgumentsSeparator")
    func argumentsSeparator() throws {
        let parser = OptionsParser(argumentsSeparator: ",")
        let options = try Self.parse(
            "/size,100,100,1/plain/\(Self.plainOrigin)", rules: ProxyPath.Rules(argumentsSeparator: ","), parser: parser
        )
        .options
        #expect(options.width == 100 && options.height == 100 && options.enlarge)
    }

    @Test("ParsePathFormat, ...Resize, ...ResizingType, ...Size, ...Width, ...Height, ...Enlarge, ...Extend")
    func sizes() throws {
        func options(_ segment: String) throws -> ProcessingOptions { try Self.parse("/\(segment)/plain/\(Self.plainOrigin)").options }
        #expect(try options("format:webp").format == .webP)
        let resized = try options("resize:fill:100:200:1")
        #expect(resized.resizingType == .fill && resized.width == 100 && resized.height == 200 && resized.enlarge)
        #expect(try options("resizing_type:fill").resizingType == .fill)
        let sized = try options("size:100:200:1")
        #expect(sized.width == 100 && sized.height == 200 && sized.enlarge)
        #expect(try options("width:100").width == 100)
        #expect(try options("height:100").height == 100)
        #expect(try options("enlarge:1").enlarge)
        let extended = try options("extend:1:so:10:20")
        #expect(extended.extend && extended.extendGravity == Gravity(.south, x: 10, y: 20))
    }

    @Test("ParsePathExtendSmartGravity, ...ExtendReplicateGravity, ...GravityReplicate, ...CropGravityReplicate: errors")
    func refusedGravities() {
        for segment in ["extend:1:sm", "extend:1:re", "gravity:re", "crop:100:200:re"] {
            #expect(throws: ProxyError.self, "\(segment)") { try Self.parse("/\(segment)/plain/\(Self.plainOrigin)") }
        }
    }

    @Test("ParsePathGravity, ...GravityFocusPoint, ...Crop, ...CropGravity")
    func gravities() throws {
        func options(_ segment: String) throws -> ProcessingOptions { try Self.parse("/\(segment)/plain/\(Self.plainOrigin)").options }
        #expect(try options("gravity:soea").gravity.kind == .southEast)
        #expect(try options("gravity:fp:0.5:0.75").gravity == Gravity(.focusPoint, x: 0.5, y: 0.75))
        let crop = try #require(try options("crop:100:200").crop)
        #expect(crop.width == 100 && crop.height == 200 && crop.gravity == nil, "no gravity of its own: the main one applies")
        let placed = try #require(try options("crop:100:200:nowe:10:20").crop)
        #expect(placed.width == 100 && placed.height == 200 && placed.gravity == Gravity(.northWest, x: 10, y: 20))
    }

    @Test("ParsePathQuality, ...Background, ...BackgroundHex, ...BackgroundDisable, ...Blur, ...Sharpen, ...Dpr, ...Watermark")
    func filters() throws {
        func options(_ segments: String) throws -> ProcessingOptions { try Self.parse("/\(segments)/plain/\(Self.plainOrigin)").options }
        #expect(try options("quality:55").quality == 55)
        #expect(try options("background:128:129:130").background == RGBAColor(red: 128, green: 129, blue: 130))
        #expect(try options("background:ffddee").background == RGBAColor(red: 0xFF, green: 0xDD, blue: 0xEE))
        #expect(try options("background:fff/background:").background == nil)
        #expect(try options("blur:0.2").blur == 0.2)
        #expect(try options("sharpen:0.2").sharpen == 0.2)
        #expect(try options("dpr:2").dpr == 2)
        let watermark = try #require(try options("watermark:0.5:soea:10:20:0.6").watermark)
        #expect(watermark.opacity == 0.5 && watermark.position == .southEast && watermark.x == 10 && watermark.y == 20)
        #expect(watermark.scale == 0.6)
    }

    @Test("ParsePathPreset, ...PresetDefault, ...PresetLoopDetection (their UsedPresets lists are not kept here)")
    func presets() throws {
        let parser = OptionsParser(presets: ["test1": "resizing_type:fill", "test2": "blur:0.2/quality:50"])
        let preset = try Self.parse("/preset:test1:test2/plain/\(Self.plainOrigin)", parser: parser).options
        #expect(preset.resizingType == .fill && preset.blur == 0.2 && preset.quality == 50)
        let defaults = OptionsParser(presets: ["default": "resizing_type:fill/blur:0.2/quality:50"])
        let overridden = try Self.parse("/quality:70/plain/\(Self.plainOrigin)", parser: defaults).options
        #expect(overridden.resizingType == .fill && overridden.blur == 0.2 && overridden.quality == 70)
        let looping = OptionsParser(presets: ["test1": "resizing_type:fill/preset:test2", "test2": "blur:0.2/preset:test1"])
        let looped = try Self.parse("/preset:test1/plain/\(Self.plainOrigin)", parser: looping).options
        #expect(looped.resizingType == .fill && looped.blur == 0.2)
    }

    @Test("ParsePathCachebuster, ...StripMetadata, ...PreserveHDR")
    func switches() throws {
        func options(_ segments: String) throws -> ProcessingOptions { try Self.parse("/\(segments)/plain/\(Self.plainOrigin)").options }
        #expect(try options("cachebuster:123").cacheBuster == "123")
        #expect(try options("strip_metadata:true").stripMetadata)
        #expect(try options("ph:1").preserveHDR)
    }

    @Test(
        "ParsePathClientHints (each case) and ParsePathClientHintsRedefine",
        arguments: [
            ("NoClientHints", nil, nil, 0, 1.0), ("WidthOnly", nil, "100", 100, 1.0), ("DprOnly", "2.0", nil, 0, 2.0),
            ("WidthAndDpr", "2.0", "100", 50, 2.0),
        ] as [(String, String?, String?, Int, Double)])
    func clientHints(_ name: String, _ dpr: String?, _ width: String?, _ expectedWidth: Int, _ expectedDPR: Double) throws {
        let hints = OptionsParser.ClientHints(dpr: [dpr], width: [width])
        let options = try Self.parse("/plain/\(Self.plainOrigin)@png", hints: hints).options
        #expect(options.width == expectedWidth && options.dpr == expectedDPR, "\(name)")
        let redefined = try Self.parse("/width:150/dpr:3.0/plain/\(Self.plainOrigin)@png", hints: hints).options
        #expect(redefined.width == 150 && redefined.dpr == 3)
    }

    @Test("ParseSkipProcessing, ...SkipProcessingInvalid, ParseExpires, ...ExpiresExpired")
    func skipAndExpiry() throws {
        func options(_ segments: String) throws -> ProcessingOptions { try Self.parse("/\(segments)/plain/\(Self.plainOrigin)").options }
        #expect(try options("skp:jpg:png").skipProcessing == [.jpeg, .png])
        #expect(throws: ProxyError.self) { try options("skp:jpg:png:bad_format") }
        #expect(try options("exp:32503669200").expires == 32_503_669_200)
        #expect(throws: ProxyError.self) { try options("exp:1609448400") }
    }

    @Test("ParsePathOnlyPresets, ParseBase64URLOnlyPresets")
    func onlyPresets() throws {
        let rules = ProxyPath.Rules(onlyPresets: true)
        let parser = OptionsParser(presets: ["test1": "blur:0.2", "test2": "quality:50"])
        for (path, source) in [
            ("/test1:test2/plain/\(Self.plainOrigin)@png", Self.plainOrigin), ("/test1:test2/\(Self.base64(Self.origin)).png", Self.origin),
        ] {
            let parsed = try Self.parse(path, rules: rules, parser: parser)
            #expect(parsed.options.blur == 0.2 && parsed.options.quality == 50 && parsed.options.format == .png)
            #expect(parsed.source == source)
        }
    }

    @Test(
        "ParseAllowedOptions (each case): options outside the list are refused, presets may use any",
        arguments: [
            ("w:100/h:200", true), ("w:100/h:200/blur:10", false), ("w:100/h:200/pr:test1", true), ("w:100/h:200/pr:test1/blur:10", false),
        ])
    func allowedOptions(_ segments: String, _ accepted: Bool) {
        let parser = OptionsParser(presets: ["test1": "blur:0.2"], allowedOptions: ["w", "h", "pr"])
        let result = Result { try Self.parse("/\(segments)/\(Self.base64(Self.origin)).png", parser: parser) }
        if accepted {
            #expect((try? result.get()) != nil, "\(segments)")
        } else {
            // imgproxy: "Forbidden processing option blur", a 404 as here.
            #expect(throws: ProxyError.notFound("the option blur is not allowed here")) { try result.get() }
        }
    }
}
