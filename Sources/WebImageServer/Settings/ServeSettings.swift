import Foundation
package import Logging
package import WebImage

/// What `webimage serve` is configured with: every ``ServerSetting`` read from its flags, then
/// its `WEBIMAGE_*` variable, then the imgproxy variable it stands for (``ImgproxyVariables``),
/// put together and checked. A flag given wins; a variable fills in a flag not given, a
/// `WEBIMAGE_*` one before its imgproxy counterpart.
package struct ServeSettings: Sendable {
    /// The server's configuration.
    package var configuration = ImageServerConfiguration()
    /// The log's level (`--log-level`).
    package var logLevel = Logger.Level.info
    /// `--log-format json`: JSON lines instead of text.
    package var logsJSON = false
    /// `WEBIMAGE_TRACING` (imgproxy's `IMGPROXY_OPEN_TELEMETRY_ENABLE`): traces on or off
    /// whatever the `OTEL_*` variables say; nil leaves it to them.
    package var tracing: Bool?
    /// What start-up reports about the environment: imgproxy settings not supported here.
    package var warnings: [String] = []
    /// Settings read apart and put together once every row is read.
    var parts = Parts()
    /// The process's environment, for the AWS and Google settings the clients read themselves.
    let environment: [String: String]

    /// Settings that make one value of the configuration together.
    struct Parts: Sendable {
        var keys: [String] = []
        var salts: [String] = []
        var keyFile: String?
        var saltFile: String?
        var presets: [String] = []
        var presetsPath: String?
        var fallback = ImageParts()
        var fallbackStatus: Int?
        var fallbackTTL: Int?
        var watermark = ImageParts()
        var watermarkOpacity: Double?
        var useS3 = false
        var s3 = BucketParts()
        var useGCS = false
        var gcsKey: String?
        var gcsEndpoint: String?
        var gcsAllowedBuckets: [String] = []
        var gcsDeniedBuckets: [String] = []
        var cacheUse: String?
        var cacheBucket: String?
        var resultBucket: String?
        var resultBucketClient = BucketParts()
        var resultBucketPrefix = ""
        var resultBucketReportsErrors = false
        var unsharpMasking = UnsharpMasking(mode: .none)
    }

    /// An image the server is configured with: base64 data, a file or a URL (imgproxy's order).
    struct ImageParts: Sendable {
        var data: String?
        var path: String?
        var url: String?
    }

    /// An S3 client's own region, endpoint and addressing, over the AWS settings.
    struct BucketParts: Sendable {
        var region: String?
        var endpoint: String?
        var pathStyle = true
        var allowedBuckets: [String] = []
        var deniedBuckets: [String] = []
    }

    /// The settings `arguments` (`serve`'s, after the command's name) and `environment` give.
    /// - Throws: `WebImageError.Code.invalidArgument`, naming the flag or variable at fault.
    package init(arguments: [String], environment: [String: String]) throws(WebImageError) {
        self.environment = environment
        let imgproxy = try ImgproxyVariables(environment: environment).translate()
        warnings = imgproxy.warnings
        let given = try SettingArguments.read(arguments)
        for setting in ServerSetting.all {
            guard let (values, origin) = Self.values(of: setting, given: given, own: environment, imgproxy: imgproxy.variables) else {
                continue
            }
            do {
                try setting.read(values, &self)
            } catch {
                throw WebImageError(.invalidArgument, "\(origin): \(error.message ?? error.description)")
            }
        }
        try assemble()
    }

    /// Where `serve` listens, read from `environment` as `serve` reads it (`WEBIMAGE_BIND`, else
    /// imgproxy's `IMGPROXY_BIND` or `PORT`, else the default), for a command that needs only the
    /// address and not the rest of the settings (`webimage health`).
    /// - Throws: `WebImageError.Code.invalidArgument`, naming the variable at fault.
    package static func listeningAddress(environment: [String: String]) throws(WebImageError) -> (host: String, port: Int) {
        let defaults = ImageServerConfiguration()
        return try value(of: "BIND", environment: environment, SettingText.address) ?? (defaults.host, defaults.port)
    }

    /// One setting's value, read from `environment` by its row (`name`, after `WEBIMAGE_`) as
    /// `serve` reads it (its `WEBIMAGE_` variable, else the imgproxy variable it stands for), for
    /// a command that reads only that setting; nil when neither is set.
    /// - Throws: `WebImageError.Code.invalidArgument`, naming the variable at fault.
    package static func value<Value>(
        of name: String, environment: [String: String], _ parse: (String?) throws(WebImageError) -> Value
    ) throws(WebImageError) -> Value? {
        let imgproxy = try ImgproxyVariables(environment: environment).translate()
        guard let setting = ServerSetting.all.first(where: { $0.name == name }),
            let (values, origin) = values(of: setting, given: [:], own: environment, imgproxy: imgproxy.variables)
        else { return nil }
        do {
            return try parse(values.last)
        } catch {
            throw WebImageError(.invalidArgument, "\(origin): \(error.message ?? error.description)")
        }
    }

    private static func values(of setting: ServerSetting, given: [String: [String]], own: [String: String], imgproxy: [String: String])
        -> ([String], String)?
    {
        if let values = given[setting.name], let flag = setting.flag { return (values, "--" + flag) }
        let origin: String
        let text: String
        if let value = own[setting.variable], setting.keepsEmpty || !value.isEmpty {
            (origin, text) = (setting.variable, value)
        } else if let value = imgproxy[setting.variable] {
            (origin, text) = (setting.imgproxy?.name ?? setting.variable, value)
        } else {
            return nil
        }
        if case .repeatable = setting.form { return (SettingText.list(text), origin) }
        return ([text], origin)
    }
}
