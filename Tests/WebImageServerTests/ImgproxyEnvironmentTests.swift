import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageTesting
import WebImageServer
import WebImageTestSupport

/// imgproxy's `IMGPROXY_*` variables on `webimage serve`. The expected readings come from
/// imgproxy's source: `env/parsers.go` (a value of spaces is unset; durations are whole seconds;
/// lists split on commas and trimmed; keys are hex), `env/types.go` (booleans are Go's
/// `strconv.ParseBool`), `server/config.go` (`IMGPROXY_BIND` defaults to `:8080`, every
/// interface; `PORT` when it is unset), `options/parser/config.go` (`IMGPROXY_PRESETS` split by
/// `IMGPROXY_PRESETS_SEPARATOR`), `workers/config.go` and `security/config.go` (0 is "no limit").
@Suite("imgproxy environment")
struct ImgproxyEnvironmentTests {
    private func translate(_ environment: [String: String]) throws -> ImgproxyVariables.Translation {
        try ImgproxyVariables(environment: environment).translate()
    }

    @Test("each supported variable becomes its WEBIMAGE_ counterpart, read as imgproxy reads it")
    func mapsWithImgproxysParsing() throws {
        let translation = try translate([
            "IMGPROXY_BIND": ":9090", "IMGPROXY_KEY": " 736563726574 , 6b6579", "IMGPROXY_SALT": "68656C6C6F,73616c74",
            "IMGPROXY_WORKERS": "3", "IMGPROXY_TIMEOUT": "12", "IMGPROXY_AUTO_WEBP": "T", "IMGPROXY_AUTO_AVIF": "0",
            "IMGPROXY_MAX_SRC_RESOLUTION": "16.5", "IMGPROXY_LOG_LEVEL": "WARN", "IMGPROXY_QUALITY": "   ",
            "IMGPROXY_PRESETS": "thumb=rs:fill:150:150; small=w:100", "IMGPROXY_PRESETS_SEPARATOR": ";",
            "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true", "IMGPROXY_ALLOWED_SOURCES": "https://*.example.com/, http://a.test/",
        ])
        #expect(
            translation.variables == [
                "WEBIMAGE_BIND": "0.0.0.0:9090", "WEBIMAGE_KEY": "736563726574,6b6579", "WEBIMAGE_SALT": "68656C6C6F,73616c74",
                "WEBIMAGE_CONCURRENCY": "3", "WEBIMAGE_REQUEST_TIMEOUT": "12", "WEBIMAGE_AUTO_WEBP": "true",
                "WEBIMAGE_AUTO_AVIF": "false", "WEBIMAGE_MAX_SRC_RESOLUTION": "16.5", "WEBIMAGE_LOG_LEVEL": "warning",
                "WEBIMAGE_PRESET": "thumb=rs:fill:150:150,small=w:100", "WEBIMAGE_ALLOW_LOOPBACK_SOURCES": "true",
                "WEBIMAGE_ALLOWED_SOURCES": "https://*.example.com/,http://a.test/",
            ])
        #expect(translation.warnings.isEmpty, "\(translation.warnings)")
        #expect(try translate(["PORT": "8081"]).variables == ["WEBIMAGE_BIND": "0.0.0.0:8081"])
        // imgproxy's log formats (logger/config.go: pretty, structured, json, gcp) and its metrics address.
        for (format, ours) in [("pretty", "text"), ("structured", "text"), ("JSON", "json"), ("gcp", "json")] {
            #expect(try translate(["IMGPROXY_LOG_FORMAT": format]).variables == ["WEBIMAGE_LOG_FORMAT": ours])
        }
        #expect(throws: (any Error).self) { try translate(["IMGPROXY_LOG_FORMAT": "xml"]) }
        #expect(try translate(["IMGPROXY_PROMETHEUS_BIND": ":9091"]).variables == ["WEBIMAGE_OPS_BIND": "0.0.0.0:9091"])
        #expect(try translate(["PORT": "8081", "IMGPROXY_BIND": "127.0.0.1:7000"]).variables == ["WEBIMAGE_BIND": "127.0.0.1:7000"])
    }

    @Test("values imgproxy would refuse stop the start with the variable named")
    func refusesBadValues() {
        let cases: [([String: String], String)] = [
            (["IMGPROXY_KEY": "zz"], "IMGPROXY_KEY: \"zz\" is not comma-separated hex"),
            (["IMGPROXY_AUTO_WEBP": "yes"], "IMGPROXY_AUTO_WEBP: \"yes\" is not a boolean"),  // Go's ParseBool has no "yes"
            (["IMGPROXY_WORKERS": "two"], "IMGPROXY_WORKERS: \"two\" is not an integer"),
            (["IMGPROXY_LOG_LEVEL": "verbose"], "is not debug, info, warn or error"),
        ]
        for (environment, message) in cases {
            do {
                _ = try translate(environment)
                Issue.record("\(environment) was accepted")
            } catch {
                #expect("\(error)".contains(message), "\(error)")
            }
        }
    }

    @Test("a set variable that is not supported, a name that is not imgproxy's, and a 0 meaning 'no limit' are each named")
    func warnsInsteadOfIgnoring() throws {
        let translation = try translate([
            "IMGPROXY_USE_ABS": "true", "IMGPROXY_SENTRY_DSN": "https://sentry.invalid/1", "IMGPROXY_MAX_SRC_FILE_SIZ": "10",
            "IMGPROXY_REQUESTS_QUEUE_SIZE": "0", "IMGPROXY_STRIP_METADATA": "",
        ])
        #expect(translation.variables.isEmpty)
        #expect(
            translation.warnings == [
                "IMGPROXY_REQUESTS_QUEUE_SIZE=0 means no limit in imgproxy; the default limit here stays",
                "imgproxy settings not supported here, ignored: IMGPROXY_SENTRY_DSN, IMGPROXY_USE_ABS",
                "not imgproxy settings, ignored: IMGPROXY_MAX_SRC_FILE_SIZ",
            ])
    }

    @Test("flags and WEBIMAGE_ variables win over IMGPROXY_ ones")
    func ownSettingsWin() throws {
        let environment = [
            "IMGPROXY_KEY": "736563726574", "IMGPROXY_SALT": "68656C6C6F", "IMGPROXY_WORKERS": "3", "WEBIMAGE_CONCURRENCY": "5",
            "IMGPROXY_QUALITY": "70",
        ]
        let settings = try ServeSettings(
            arguments: ["--quality", "90"],
            environment: environment.merging(["IMGPROXY_FORMAT_QUALITY": "avif=50, jpg=70"]) { $1 })
        #expect(settings.configuration.formatQuality == [.webP: 79, .avif: 50, .jpegXL: 77, .jpeg: 70], "merged over the defaults")
        #expect(settings.configuration.concurrency == 5)
        #expect(settings.configuration.defaultQuality == 90)
        #expect(settings.configuration.signingKeys.count == 1)
    }

    /// imgproxy's `options/parser/config_test.go` at v4 (eef3b312): `TestPresetsPresent`,
    /// `...Empty`, `...FromFile`, `...FromFileNonExistent` and `...FromBothSources` (the
    /// variable's presets first, then the file's), with presets that are whole here
    /// (`NAME=OPTIONS`: the server reads them, where imgproxy's config test stops at the list).
    @Test("imgproxy's preset configuration tests: the separator, an empty list, a file, a missing file, both in order")
    func presetConfiguration() throws {
        let directory = try TemporaryDirectory("imgproxy-presets")
        let file = directory.url.appendingPathComponent("presets.txt")
        try "f1=w:10\nf2=h:20\n".write(to: file, atomically: true, encoding: .utf8)
        func presets(_ environment: [String: String]) throws -> [String: String] {
            let base = ["WEBIMAGE_ALLOW_UNSIGNED": "true", "IMGPROXY_PRESETS_SEPARATOR": ";"]
            return try ServeSettings(arguments: [], environment: base.merging(environment) { $1 }).configuration
                .presets
        }
        #expect(try presets(["IMGPROXY_PRESETS": "p1=w:1;p2=w:2;p3=w:3"]) == ["p1": "w:1", "p2": "w:2", "p3": "w:3"])
        #expect(try presets(["IMGPROXY_PRESETS": ""]).isEmpty)
        #expect(try presets(["IMGPROXY_PRESETS_PATH": file.path]) == ["f1": "w:10", "f2": "h:20"])
        #expect(throws: (any Error).self) { try presets(["IMGPROXY_PRESETS_PATH": directory.url.appendingPathComponent("none").path]) }
        // Both: the variable's first, then the file's, which win a name both give.
        let both = try presets(["IMGPROXY_PRESETS": "p1=w:1;f1=w:99", "IMGPROXY_PRESETS_PATH": file.path])
        #expect(both == ["p1": "w:1", "f1": "w:10", "f2": "h:20"])
    }

    @Test("imgproxy's GCS variables: IMGPROXY_USE_GCS with its key, endpoint and bucket lists; a key that is not one is refused")
    func gcsSettings() throws {
        let imgproxy = [
            "WEBIMAGE_ALLOW_UNSIGNED": "true", "IMGPROXY_USE_GCS": "true", "IMGPROXY_GCS_ENDPOINT": "http://127.0.0.1:4443/storage/v1/",
            "IMGPROXY_GCS_ALLOWED_BUCKETS": "a,b", "IMGPROXY_GCS_DENIED_BUCKETS": "c",
        ]
        let settings = try ServeSettings(arguments: [], environment: imgproxy)
        let sources = try #require(settings.configuration.gcsSources)
        #expect(sources.client.endpoint == URL(string: "http://127.0.0.1:4443"))
        #expect(sources.allowedBuckets == ["a", "b"] && sources.deniedBuckets == ["c"])
        #expect(
            try ServeSettings(arguments: [], environment: ["WEBIMAGE_ALLOW_UNSIGNED": "true"]).configuration
                .gcsSources == nil)
        var badKey = imgproxy
        badKey["IMGPROXY_GCS_KEY"] = "{}"
        #expect(throws: (any Error).self) { try ServeSettings(arguments: [], environment: badKey) }
    }

    @Test("imgproxy's S3 source and internal cache variables over the AWS ones; flags over both; refusals named")
    func s3Settings() throws {
        let aws = [
            "HOME": "/nonexistent", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "us-west-2",
            "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000", "WEBIMAGE_ALLOW_UNSIGNED": "true",
        ]
        let imgproxy = [
            "IMGPROXY_USE_S3": "true", "IMGPROXY_S3_REGION": "eu-west-1", "IMGPROXY_S3_ALLOWED_BUCKETS": "a, b",
            "IMGPROXY_SOURCE_URL_QUERY_SEPARATOR": "", "IMGPROXY_CACHE_USE": "s3", "IMGPROXY_CACHE_BUCKET": "results",
            "IMGPROXY_CACHE_PATH_PREFIX": "r/", "IMGPROXY_CACHE_S3_ENDPOINT": "http://127.0.0.1:9100",
            "IMGPROXY_CACHE_S3_ENDPOINT_USE_PATH_STYLE": "false",
        ]
        let settings = try ServeSettings(arguments: [], environment: aws.merging(imgproxy) { $1 })
        let sources = try #require(settings.configuration.s3Sources)
        #expect(sources.client.region == "eu-west-1" && sources.client.endpoint == URL(string: "http://127.0.0.1:9000"))
        #expect(sources.client.usesPathStyle && sources.client.credentials?.accessKeyID == "AKID")
        #expect(sources.allowedBuckets == ["a", "b"] && sources.deniedBuckets.isEmpty)
        #expect(settings.configuration.sourceURLQuerySeparator == "", "set and empty: no separator")
        let bucket = try #require(settings.configuration.resultBucket)
        #expect(bucket.bucket == "results" && bucket.keyPrefix == "r/" && !bucket.reportsErrors)
        #expect(bucket.client.region == "us-west-2" && bucket.client.endpoint == URL(string: "http://127.0.0.1:9100"))
        #expect(!bucket.client.usesPathStyle)
        let flagged = try ServeSettings(
            arguments: (["--s3-region", "ap-south-1", "--result-bucket", "other", "--result-bucket-path-style", "true"]),
            environment: aws.merging(imgproxy) { $1 })
        #expect(flagged.configuration.s3Sources?.client.region == "ap-south-1")
        #expect(flagged.configuration.resultBucket?.bucket == "other" && flagged.configuration.resultBucket?.client.usesPathStyle == true)
        #expect(try ServeSettings(arguments: [], environment: aws).configuration.s3Sources == nil)
        for (environment, message) in [
            (["IMGPROXY_CACHE_USE": "fs"], "only s3"), (["IMGPROXY_CACHE_USE": "s3"], "needs IMGPROXY_CACHE_BUCKET"),
            (["IMGPROXY_USE_S3": "true", "AWS_PROFILE": "nobody"], "S3 sources"),
        ] {
            do {
                _ = try ServeSettings(arguments: [], environment: aws.merging(environment) { $1 })
                Issue.record("accepted \(environment)")
            } catch {
                #expect("\(error)".contains(message), "\(error)")
            }
        }
    }

    @Test("every imgproxy variable is in docs/imgproxy-configuration.md with its status here")
    func documented() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let docs = try String(contentsOf: root.appendingPathComponent("docs/imgproxy-configuration.md"), encoding: .utf8)
        for (name, support) in ImgproxyVariables.support {
            let expected: String
            switch support {
            case .mapped(let target, _): expected = "| `\(name)` | `\(target)` |"
            case .unsupported(let reason): expected = "| `\(name)` | not supported: \(reason) |"
            case .readWith(let other): expected = "| `\(name)` | read with `\(other)` |"
            }
            #expect(docs.contains(expected), "\(expected)")
        }
    }

    @Test("serve started from an imgproxy environment checks imgproxy's own signature example and warns of what it ignores")
    func startsFromAnImgproxyEnvironment() async throws {
        let directory = try TemporaryDirectory("imgproxy-env")
        let errors = directory.url.appendingPathComponent("stderr.txt")
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("WEBIMAGE_") }
        environment.merge([
            // imgproxy's documented example: key "secret", salt "hello".
            "IMGPROXY_KEY": "736563726574", "IMGPROXY_SALT": "68656C6C6F", "IMGPROXY_BIND": "127.0.0.1:0",
            "IMGPROXY_ALLOWED_SOURCES": "http://127.0.0.1:9/", "IMGPROXY_USE_ABS": "true", "WEBIMAGE_RESULT_CACHE_DIR": directory.path,
        ]) { _, new in new }
        let process = try ChildProcess(ChildProcess.builtProduct("webimage"), ["serve"], environment: environment, standardError: errors)
        let line = try await process.waitForLine { $0.hasPrefix("listening on ") }
        let address = String(line.dropFirst("listening on ".count))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        // The signature imgproxy's docs give for this path with that key and salt: it passes, and
        // the source (example.com) is refused by the allow-list before any connection (404, as imgproxy v4).
        let path =
            "/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
        let signed = try await client.execute(HTTPClientRequest(url: address + path), timeout: .seconds(10))
        let signedBody = String(buffer: try await signed.body.collect(upTo: 1 << 16))
        #expect(signed.status == .notFound && signedBody.contains("not on the allowed list"), "\(signedBody)")
        let forged = path.replacingOccurrences(of: "oKfU", with: "AKfU")
        let refused = try await client.execute(HTTPClientRequest(url: address + forged), timeout: .seconds(10))
        let refusedBody = String(buffer: try await refused.body.collect(upTo: 1 << 16))
        #expect(refused.status == .forbidden && refusedBody.contains("invalid signature"), "\(refusedBody)")
        process.terminate()
        _ = try await process.waitForExit()
        try await client.shutdown()
        let log = try String(contentsOf: errors, encoding: .utf8)
        #expect(log.contains("imgproxy settings not supported here, ignored: IMGPROXY_USE_ABS"), "\(log)")
    }
}
