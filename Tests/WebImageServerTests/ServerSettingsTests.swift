import Foundation
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// The settings' table (issue 61, step 2): each setting declared once, read the same from its
/// flag, its `WEBIMAGE_` variable and its imgproxy variable, held to its rule whether it comes
/// from the command or from an application's code, and documented from the same row.
@Suite("server settings")
struct ServerSettingsTests {
    private let unsigned = ["WEBIMAGE_ALLOW_UNSIGNED": "1"]

    private func settings(_ arguments: [String], _ environment: [String: String] = [:]) throws(WebImageError) -> ServeSettings {
        try ServeSettings(arguments: arguments, environment: unsigned.merging(environment) { $1 })
    }

    private func refusal(_ arguments: [String], _ environment: [String: String] = [:]) -> String? {
        do {
            _ = try settings(arguments, environment)
            return nil
        } catch {
            return error.message
        }
    }

    @Test("every row has its own name, flag and imgproxy variable")
    func rowsAreDistinct() {
        let names = ServerSetting.all.map(\.name)
        #expect(Set(names).count == names.count)
        let flags = ServerSetting.all.compactMap(\.flag)
        #expect(Set(flags).count == flags.count)
        let imgproxy = ServerSetting.all.compactMap(\.imgproxy?.name)
        #expect(Set(imgproxy).count == imgproxy.count)
        #expect(ServerSetting.all.count >= 110, "\(ServerSetting.all.count)")
    }

    @Test("a flag, --flag=value, --no-flag, a repeated flag and a variable are read alike")
    func flagForms() throws {
        let given = try settings(["--quality=90", "--no-etag", "--auto-webp", "--preset", "a=w:1", "--preset", "b=w:2", "--ttl", "5"])
        #expect(given.configuration.defaultQuality == 90 && !given.configuration.usesETag && given.configuration.autoWebP)
        #expect(given.configuration.presets == ["a": "w:1", "b": "w:2"] && given.configuration.resultTTL == 5)
        let variables = try settings(
            [], ["WEBIMAGE_QUALITY": "90", "WEBIMAGE_ETAG": "no", "WEBIMAGE_AUTO_WEBP": "yes", "WEBIMAGE_PRESET": "a=w:1,b=w:2"])
        #expect(variables.configuration.defaultQuality == 90 && !variables.configuration.usesETag && variables.configuration.autoWebP)
        #expect(variables.configuration.presets == ["a": "w:1", "b": "w:2"])
        // The flag wins over its variable, which wins over imgproxy's.
        let ordered = try settings(["--quality", "70"], ["WEBIMAGE_QUALITY": "60", "IMGPROXY_QUALITY": "50", "IMGPROXY_TTL": "9"])
        #expect(ordered.configuration.defaultQuality == 70 && ordered.configuration.resultTTL == 9)
        #expect(try settings([], ["WEBIMAGE_QUALITY": "60", "IMGPROXY_QUALITY": "50"]).configuration.defaultQuality == 60)
    }

    @Test("a mistake names where it came from: the flag, the variable or imgproxy's variable")
    func refusalsNameTheirOrigin() {
        #expect(refusal(["--queue", "many"]) == "--queue: \"many\" is not a whole number")
        #expect(refusal([], ["WEBIMAGE_QUEUE": "many"]) == "WEBIMAGE_QUEUE: \"many\" is not a whole number")
        #expect(
            refusal([], ["IMGPROXY_LAST_MODIFIED_BUSTER": "yesterday"])?.hasPrefix("IMGPROXY_LAST_MODIFIED_BUSTER: is an RFC 3339 time")
                == true)
        #expect(refusal(["--bogus", "1"]) == "unknown option --bogus (webimage serve --help lists them)")
        #expect(refusal(["--auto-webp=1"]) == "--auto-webp takes no value")
        #expect(refusal(["--quality"]) == "--quality needs a value (Q)")
        #expect(refusal(["quality"]) == "unexpected argument \"quality\"; settings are --NAME VALUE")
        #expect(refusal(["--no-quality"]) == "unknown option --no-quality (webimage serve --help lists them)")
        #expect(refusal(["--quality", "500"]) == "--quality is 1-100")
        #expect(refusal([], ["WEBIMAGE_PLAYGROUND_TOKEN": "t"]) == "--playground-token needs --playground")
        #expect(refusal(["--autoquality-method", "size"]) == "--autoquality-method size needs --autoquality-target above 0")
    }

    @Test("an application's configuration is held to the same rules when the proxy is made")
    func applicationsAreValidated() throws {
        var configuration = ImageServerConfiguration()
        configuration.allowsUnsigned = true
        configuration.defaultQuality = 500
        #expect(throws: WebImageError(.invalidArgument)) { try ImageProxy(configuration: configuration) }
        do {
            try configuration.validate()
            Issue.record("validated")
        } catch {
            #expect(error.message == "--quality is 1-100")
        }
        configuration.defaultQuality = 80
        configuration.encoding.webPEffort = 9
        configuration.pathPrefix = "/images/"
        #expect(
            ServerSetting.brokenRules(of: configuration) == [
                "--webp-effort is 1-6", "--path-prefix starts with / and does not end with one, as /images",
            ])
        #expect(ServerSetting.brokenRules(of: ImageServerConfiguration()).isEmpty, "the defaults keep every rule")
    }

    @Test("the listening address alone, for `webimage health`, read as serve reads it")
    func listeningAddress() throws {
        #expect(try ServeSettings.listeningAddress(environment: [:]) == ("127.0.0.1", 8080))
        #expect(try ServeSettings.listeningAddress(environment: ["PORT": "9000"]) == ("0.0.0.0", 9000))
        #expect(try ServeSettings.listeningAddress(environment: ["IMGPROXY_BIND": ":9001", "PORT": "9000"]) == ("0.0.0.0", 9001))
        #expect(
            try ServeSettings.listeningAddress(environment: ["WEBIMAGE_BIND": "[::1]:9002", "IMGPROXY_BIND": ":9001"]) == ("::1", 9002))
        do {
            _ = try ServeSettings.listeningAddress(environment: ["WEBIMAGE_BIND": "nowhere"])
            Issue.record("accepted")
        } catch {
            #expect(error.message == "WEBIMAGE_BIND: \"nowhere\" is not HOST:PORT")
        }
    }

    @Test("the result bucket from its flag, its own variable, or imgproxy's cache variables")
    func resultBucket() throws {
        let aws = ["HOME": "/nonexistent", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "us-east-1"]
        #expect(try settings([], aws.merging(["WEBIMAGE_RESULT_BUCKET": "shared"]) { $1 }).configuration.resultBucket?.bucket == "shared")
        #expect(
            try settings([], aws.merging(["WEBIMAGE_CACHE_BUCKET": "shared"]) { $1 }).configuration.resultBucket == nil,
            "imgproxy's bucket counts only with its CACHE_USE")
        let imgproxy = try settings([], aws.merging(["IMGPROXY_CACHE_USE": "s3", "IMGPROXY_CACHE_BUCKET": "fleet"]) { $1 })
        #expect(imgproxy.configuration.resultBucket?.bucket == "fleet")
    }

    @Test("docs/serve.md's table of settings is the one the rows make, and --help lists every flag")
    func documented() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let url = root.appendingPathComponent("docs/serve.md")
        let docs = try String(contentsOf: url, encoding: .utf8)
        let table = ServerSetting.markdownTable
        if ProcessInfo.processInfo.environment["WEBIMAGE_WRITE_SETTINGS_TABLE"] != nil, !docs.contains(table) {
            // scripts/settings-table.sh: the table between its heading row and the first line after it that is not a row.
            let lines = docs.components(separatedBy: "\n")
            let start = try #require(lines.firstIndex { $0.hasPrefix("| flag | variable | default | what |") })
            let end = lines[start...].firstIndex { !$0.hasPrefix("|") } ?? lines.endIndex
            let rewritten = lines[..<start] + table.dropLast().components(separatedBy: "\n") + lines[end...]
            try rewritten.joined(separator: "\n").write(to: url, atomically: true, encoding: .utf8)
            return
        }
        #expect(docs.contains(table), "run scripts/settings-table.sh")
        for setting in ServerSetting.all {
            #expect(ServerSetting.helpText.contains(setting.usage ?? setting.variable))
        }
    }
}
