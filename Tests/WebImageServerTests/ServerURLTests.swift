import Foundation
import Testing
import WebImage
@testable import WebImageServer
import WebImageTestSupport

/// imgproxy's URL format without a server: signatures, paths, options and the plan's arithmetic.
@Suite("Server URLs")
struct ServerURLTests {
    let examplePath = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"

    @Test("imgproxy's published signing example: key secret, salt hello")
    func publishedExample() {
        let signer = URLSigner(keys: [ServerHarness.exampleKey])
        #expect(signer.signature(for: examplePath) == "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8")
        #expect(signer.isValid("oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8", for: Substring(examplePath)))
    }

    @Test("a wrong key, a changed path, garbage and a truncated signature of the wrong size are refused")
    func refusals() {
        let signer = URLSigner(keys: [ServerHarness.exampleKey])
        let other = URLSigner(keys: [SigningKey(hexKey: "00ff", hexSalt: "68656C6C6F")!])
        #expect(!signer.isValid(Substring(other.signature(for: examplePath)), for: Substring(examplePath)))
        #expect(!signer.isValid("oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8", for: Substring(examplePath + "x")))
        #expect(!signer.isValid("not+base64/", for: Substring(examplePath)))
        #expect(!signer.isValid("oKfUtW34Dvo2BGQe", for: Substring(examplePath)))
    }

    @Test("rotation accepts either pair; truncation keeps the first bytes of the digest")
    func rotationAndTruncation() {
        let old = SigningKey(hexKey: "0102", hexSalt: "0304")!
        let rotated = URLSigner(keys: [ServerHarness.exampleKey, old])
        #expect(rotated.isValid(Substring(URLSigner(keys: [old]).signature(for: examplePath)), for: Substring(examplePath)))
        #expect(rotated.isValid("oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8", for: Substring(examplePath)))
        let short = URLSigner(keys: [ServerHarness.exampleKey], signatureSize: 8)
        let signature = short.signature(for: examplePath)
        #expect(signature == "oKfUtW34Dvo")
        #expect(short.isValid(Substring(signature), for: Substring(examplePath)))
        #expect(!URLSigner(keys: [ServerHarness.exampleKey]).isValid(Substring(signature), for: Substring(examplePath)))
    }

    @Test("base64 sources split into chunks, plain sources with an escaped query and @extension")
    func paths() throws {
        let chunked = try ProxyPath(parsing: Substring("/sig" + examplePath))
        #expect(chunked.source.absoluteString == "http://example.com/images/curiosity.jpg")
        #expect(chunked.options == ["rs:fill:300:400:0", "g:sm"])
        #expect(chunked.extensionName == "png")
        #expect(chunked.signedPath == Substring(examplePath))
        let plain = try ProxyPath(parsing: "/unsafe/w:300/plain/https://a.test/i.jpg%3Fv%3D2@webp")
        #expect(plain.source.absoluteString == "https://a.test/i.jpg?v=2")
        #expect(plain.extensionName == "webp")
        #expect(try ProxyPath(parsing: "/unsafe/plain/http://a.test/x.jpg").extensionName == nil)
    }

    @Test("bad paths answer 400 or 404 with a reason")
    func badPaths() {
        func status(_ path: String) -> Int? {
            do { _ = try ProxyPath(parsing: Substring(path)) } catch { return error.status.code }
            return nil
        }
        #expect(status("/onlysignature") == 404)
        #expect(status("/sig/w:10") == 404)
        #expect(status("/sig/plain/ftp://a.test/x.jpg") == 400)
        #expect(status("/sig/plain/file:///etc/passwd") == 400)
        #expect(status("/sig/!!!notbase64") == 400)
        #expect(status("/sig/plain/http://a.test/%zz") == 400)
    }

    @Test("full and short names mean the same; the canonical form ignores how options were written")
    func canonical() throws {
        let parser = OptionsParser()
        let long = try parser.parse(["resize:fill:300:200:1", "gravity:no:0:10", "quality:70", "blur:2", "cachebuster:v1"])
        let short = try parser.parse(["rt:fill", "w:300", "h:200", "el:t", "g:no:0:10", "q:70", "bl:2", "cb:v1"])
        #expect(long == short)
        #expect(long.canonical == short.canonical)
        #expect(long.canonical == "rs:fill:300:200:1:0/g:no:0:10/bl:2/q:70/cb:v1")
        #expect(try parser.parse(["rs:fit::300"]).height == 300)
        #expect(try parser.parse([], extensionName: "jpg").format == .jpeg)
        // The extension is applied after the options and wins (imgproxy's parsePathOptions);
        // `raw` takes none.
        #expect(try parser.parse(["f:webp"], extensionName: "png").format == .png)
        #expect(try parser.parse(["raw:1"], extensionName: "png").format == nil)
    }

    @Test("every mistake is a 400 that names the option")
    func optionErrors() {
        let parser = OptionsParser(presets: ["thumb": "rs:fill:100:100"])
        func reason(_ segments: [Substring]) -> String? {
            do { _ = try parser.parse(segments) } catch { return error.description }
            return nil
        }
        #expect(reason(["nope:1"]) == "400 unknown option \"nope\"")
        #expect(reason(["w:1:2"]) == "400 w: takes at most 1 argument, not 2")
        #expect(reason(["w:abc"])?.hasPrefix("400 w: \"abc\" is not a whole number") == true)
        #expect(reason(["h:-5"])?.hasPrefix("400 h: \"-5\"") == true)
        // A box over the result limit is not refused: the result is scaled down to fit
        // (imgproxy's limitScale; the size tables in ImgproxyTables/ check the sizes).
        #expect(reason(["w:20000", "dpr:2"]) == nil)
        #expect(reason(["rot:45"]) == "400 rot: the angle must be a multiple of 90, not 45")
        #expect(reason(["g:middle"])?.hasPrefix("400 g: unknown gravity") == true)
        #expect(reason(["f:bmp"])?.hasPrefix("422 this server cannot write bmp") == true)
        #expect(reason(["pr:missing"]) == "400 unknown preset \"missing\" (preset)")
        #expect(reason(["exp:1000"]) == "404 the URL expired at 1000 (expires)")
        #expect(reason(["exp:4102444800"]) == nil, "a Unix time of 2100")
        #expect(reason(["bg:12"])?.hasPrefix("400 bg:") == true)
        #expect(reason(["pr:thumb"]) == nil)
    }

    @Test("allow-list normalisation: RFC 3986's dot-segment example, unreserved escapes, ports and segment boundaries")
    func allowListNormalisation() throws {
        // RFC 3986 section 5.2.4's worked example, and its edges.
        #expect(SourceAllowList.removingDotSegments("/a/b/c/./../../g") == "/a/g")
        #expect(SourceAllowList.removingDotSegments("/../../x") == "/x")
        #expect(SourceAllowList.removingDotSegments("/a/b/..") == "/a/")
        #expect(SourceAllowList.decodingUnreserved("/%7euser/%2e%2E/a%2fb%41") == "/~user/../a%2FbA")
        let list = try SourceAllowList(["https://A.example/img", "http://b.example:8080/"])
        #expect(list.allowed(URL(string: "https://a.example:443/img/x.png")!)?.absoluteString == "https://a.example/img/x.png")
        #expect(list.allowed(URL(string: "https://a.example/img")!) != nil)
        for refused in [
            "https://a.example/imgs/x.png", "https://a.example:8443/img/x.png", "http://a.example/img/x.png",
            "https://a.example@evil.example/img/x.png", "https://a.example.evil.example/img/x.png", "http://b.example/x.png",
            "https://a.example/img/%2e%2e/x.png",
        ] {
            #expect(list.allowed(URL(string: refused)!) == nil, "\(refused)")
        }
        // imgproxy's wildcard (IMGPROXY_ALLOWED_SOURCES in its docs/configuration/options.mdx):
        // `*` matches any characters but `/`; its `@` pitfall (no trailing slash) cannot happen here.
        let wild = try SourceAllowList(["https://*.example.com/", "https://cdn.test/*/public", "http://pitfall.test"])
        for allowed in [
            "https://img.example.com/a.png", "https://a.b.example.com/x/y.png", "https://cdn.test/v2/public/a.png",
            "https://cdn.test/v2/public", "http://pitfall.test/a.png",
        ] {
            #expect(wild.allowed(URL(string: allowed)!) != nil, "\(allowed)")
        }
        for refused in [
            "https://example.com/a.png", "https://img.example.com.evil.test/a.png", "https://evil.test/.example.com/a.png",
            "https://cdn.test/v2/x/public/a.png", "https://cdn.test/v2/publicity.png", "http://pitfall.test@evil.test/a.png",
            "https://img.example.com@evil.test/a.png",
        ] {
            #expect(wild.allowed(URL(string: refused)!) == nil, "\(refused)")
        }
        #expect(throws: WebImageError.self) { try SourceAllowList(["https://a.example:*/"]) }
        #expect(throws: WebImageError.self) { try SourceAllowList(["ftp://a.example/"]) }
        #expect(throws: WebImageError.self) { try SourceAllowList(["https://a.example/?x=1"]) }
    }

    @Test("presets expand in place and `default` applies first")
    func presets() throws {
        let parser = OptionsParser(presets: ["default": "q:60", "thumb": "rs:fill:150:150/q:70"])
        #expect(try parser.parse([]).quality == 60)
        let options = try parser.parse(["pr:thumb", "h:100"])
        #expect(options.quality == 70)
        #expect(options.width == 150 && options.height == 100 && options.resizingType == .fill)
    }

    @Test("the plan: fit, fill, fill-down, force, auto, enlarge, min-width, extend and crop")
    func plan() throws {
        let parser = OptionsParser()
        func plan(_ options: String, _ width: Int = 2048, _ height: Int = 1365) throws -> ProcessingPlan {
            try ProcessingPlan(options: try parser.parse(options.split(separator: "/")), sourceWidth: width, sourceHeight: height)
        }
        let fit = try plan("rs:fit:512:512")
        #expect((fit.scaledWidth, fit.scaledHeight) == (512, 341) && fit.fill == nil)
        let fill = try plan("rs:fill:300:300")
        #expect((fill.scaledWidth, fill.scaledHeight) == (450, 300) && fill.fill?.width == 300 && fill.fill?.height == 300)
        let force = try plan("rs:force:100:100")
        #expect((force.scaledWidth, force.scaledHeight) == (100, 100))
        let small = try plan("rs:fit:4000:4000")
        #expect((small.scaledWidth, small.scaledHeight) == (2048, 1365), "not enlarged by default")
        let enlarged = try plan("rs:fit:4096:4096:1")
        #expect(enlarged.scaledWidth == 4096)
        let fillDown = try plan("rs:fill-down:400:400", 300, 200)
        #expect((fillDown.scaledWidth, fillDown.scaledHeight) == (300, 200) && fillDown.fill?.width == 200 && fillDown.fill?.height == 200)
        let autoPortrait = try plan("rs:auto:100:200")
        #expect(autoPortrait.fill == nil && autoPortrait.scaledWidth == 100, "a landscape image in a portrait box is fitted")
        let minimum = try plan("w:100/mw:200")
        #expect(minimum.scaledWidth == 200)
        let extended = try plan("rs:fit:400:400:0:1", 200, 100)
        #expect(extended.extended?.width == 400 && extended.extended?.height == 400 && extended.scaledWidth == 200)
        let cropped = try plan("c:0.5:0.5/w:100", 1000, 800)
        #expect(cropped.crop?.width == 500 && cropped.crop?.height == 400 && cropped.scaledWidth == 100 && cropped.scaledHeight == 80)
        let heightOnly = try plan("h:100")
        #expect(heightOnly.scaledWidth == 150)
    }
}
