import Foundation
package import WebImage

/// A rule a setting's value keeps, and how a message says it.
struct SettingRule<Value>: Sendable {
    let holds: @Sendable (Value) -> Bool
    /// What the value should be, after the setting's name: "is 1-100".
    let text: String

    static func within(_ range: ClosedRange<Int>) -> SettingRule<Int> {
        SettingRule<Int>(holds: { range.contains($0) }, text: "is \(range.lowerBound)-\(range.upperBound)")
    }

    static var positive: SettingRule<Int> { SettingRule<Int>(holds: { $0 > 0 }, text: "is above 0") }

    static var nonNegative: SettingRule<Int> { SettingRule<Int>(holds: { $0 >= 0 }, text: "is 0 or more") }
}

/// The kinds of row most settings are: a value of the configuration read one way and held to one rule.
extension ServerSetting {
    typealias Field<Value> = any WritableKeyPath<ImageServerConfiguration, Value> & Sendable

    /// `--FLAG`, off unless given or its variable is true.
    static func flag(_ name: String, _ field: Field<Bool>, imgproxy: ImgproxyVariable? = nil, help: String) -> ServerSetting {
        ServerSetting(name, form: .flag, imgproxy: imgproxy, default: "off", help: help) { (values, settings) throws(WebImageError) in
            settings.configuration[keyPath: field] = try SettingText.boolean(values.last)
        }
    }

    /// `--FLAG` or `--no-FLAG`, on unless turned off.
    static func toggle(_ name: String, _ field: Field<Bool>, imgproxy: ImgproxyVariable? = nil, help: String) -> ServerSetting {
        ServerSetting(name, form: .toggle, imgproxy: imgproxy, default: "on", help: help) { (values, settings) throws(WebImageError) in
            settings.configuration[keyPath: field] = try SettingText.boolean(values.last)
        }
    }

    /// A whole number held to `rule`.
    static func integer(
        _ name: String, _ field: Field<Int>, _ valueName: String, rule: SettingRule<Int>, imgproxy: ImgproxyVariable? = nil,
        default defaultText: String, help: String
    ) -> ServerSetting {
        ServerSetting(
            name, form: .value(valueName), imgproxy: imgproxy, default: defaultText, help: help,
            read: { (values, settings) throws(WebImageError) in
                settings.configuration[keyPath: field] = try SettingText.integer(values.last)
            },
            rule: { rule.holds($0[keyPath: field]) ? nil : rule.text })
    }

    /// A number of megapixels, above 0 (or 0 when `allowsZero`) and at most `maximum`.
    static func megapixels(
        _ name: String, _ field: Field<Double>, maximum: Double, allowsZero: Bool = false, imgproxy: ImgproxyVariable? = nil,
        default defaultText: String, help: String
    ) -> ServerSetting {
        let text = allowsZero ? "is 0 or more and at most \(Int(maximum))" : "is above 0 and at most \(Int(maximum))"
        return ServerSetting(
            name, form: .value("MP"), imgproxy: imgproxy, default: defaultText, help: help,
            read: { (values, settings) throws(WebImageError) in settings.configuration[keyPath: field] = try SettingText.number(values.last)
            },
            rule: { configuration in
                let value = configuration[keyPath: field]
                return (allowsZero ? value >= 0 : value > 0) && value <= maximum ? nil : text
            })
    }

    /// Seconds, above 0 (or 0 when `allowsZero`) and at most an hour.
    static func duration(
        _ name: String, _ field: Field<Duration>, allowsZero: Bool = false, imgproxy: ImgproxyVariable? = nil,
        default defaultText: String, help: String
    ) -> ServerSetting {
        ServerSetting(
            name, form: .value("SECONDS"), imgproxy: imgproxy, default: defaultText, help: help,
            read: { (values, settings) throws(WebImageError) in
                settings.configuration[keyPath: field] = try SettingText.seconds(values.last)
            },
            rule: { Self.durationRule($0[keyPath: field], allowsZero: allowsZero) })
    }

    /// Seconds that may be left unset (the default is derived from other settings).
    static func optionalDuration(
        _ name: String, _ field: Field<Duration?>, allowsZero: Bool = false, imgproxy: ImgproxyVariable? = nil,
        default defaultText: String, help: String
    ) -> ServerSetting {
        ServerSetting(
            name, form: .value("SECONDS"), imgproxy: imgproxy, default: defaultText, help: help,
            read: { (values, settings) throws(WebImageError) in
                settings.configuration[keyPath: field] = try SettingText.seconds(values.last)
            },
            rule: { $0[keyPath: field].flatMap { Self.durationRule($0, allowsZero: allowsZero) } })
    }

    private static func durationRule(_ value: Duration, allowsZero: Bool) -> String? {
        let holds = (allowsZero ? value >= .zero : value > .zero) && value <= .seconds(3600)
        return holds ? nil : allowsZero ? "is 0 or more and at most 3600 seconds" : "is above 0 and at most 3600 seconds"
    }

    /// Text taken as it is; nil when not given.
    static func text(
        _ name: String, _ field: Field<String?>, _ valueName: String, imgproxy: ImgproxyVariable? = nil,
        default defaultText: String = "none",
        help: String
    ) -> ServerSetting {
        ServerSetting(name, form: .value(valueName), imgproxy: imgproxy, default: defaultText, help: help) { values, settings in
            settings.configuration[keyPath: field] = values.last
        }
    }

    /// A comma-separated list, each entry trimmed.
    static func list(
        _ name: String, _ field: Field<[String]>, _ valueName: String, imgproxy: ImgproxyVariable? = nil,
        default defaultText: String = "none",
        help: String
    ) -> ServerSetting {
        ServerSetting(name, form: .value(valueName), imgproxy: imgproxy, default: defaultText, help: help) { values, settings in
            settings.configuration[keyPath: field] = SettingText.list(values.last)
        }
    }
}

/// Readers that put a setting's value where it goes in the settings, for rows of their own shape.
extension ServerSetting {
    typealias Reader = @Sendable ([String], inout ServeSettings) throws(WebImageError) -> Void
    typealias Path<Value> = any WritableKeyPath<ServeSettings, Value> & Sendable

    /// The last value as it is.
    static func reading(_ path: Path<String?>) -> Reader {
        { values, settings in settings[keyPath: path] = values.last }
    }

    /// The last value as a comma-separated list.
    static func reading(_ path: Path<[String]>) -> Reader {
        { values, settings in settings[keyPath: path] = SettingText.list(values.last) }
    }

    /// The last value as a boolean.
    static func reading(_ path: Path<Bool>) -> Reader {
        { (values, settings) throws(WebImageError) in settings[keyPath: path] = try SettingText.boolean(values.last) }
    }
}

/// How a setting's text is read, the same from a flag and from a variable.
package enum SettingText {
    /// 1, true or yes; 0, false or no; any case.
    package static func boolean(_ text: String?) throws(WebImageError) -> Bool {
        switch text?.lowercased() {
        case "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: throw WebImageError(.invalidArgument, "\"\(text ?? "")\" is not 1, true, yes, 0, false or no")
        }
    }

    static func integer(_ text: String?) throws(WebImageError) -> Int {
        guard let value = text.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) else {
            throw WebImageError(.invalidArgument, "\"\(text ?? "")\" is not a whole number")
        }
        return value
    }

    static func number(_ text: String?) throws(WebImageError) -> Double {
        guard let value = text.flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }), value.isFinite else {
            throw WebImageError(.invalidArgument, "\"\(text ?? "")\" is not a number")
        }
        return value
    }

    /// Seconds, to the millisecond.
    static func seconds(_ text: String?) throws(WebImageError) -> Duration {
        let seconds = try number(text)
        guard abs(seconds) < 1e9 else { throw WebImageError(.invalidArgument, "\"\(text ?? "")\" is not a number of seconds") }
        return .milliseconds(Int64(seconds * 1000))
    }

    /// Comma-separated entries, trimmed, empty ones dropped.
    static func list(_ text: String?) -> [String] {
        (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `HOST:PORT` (an IPv6 host in brackets).
    package static func address(_ text: String?) throws(WebImageError) -> (host: String, port: Int) {
        guard let text, let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port)
        else {
            throw WebImageError(.invalidArgument, "\"\(text ?? "")\" is not HOST:PORT")
        }
        return (String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port)
    }

    /// Format names as imgproxy writes them (`jpg` for JPEG), each known.
    static func formats(_ text: String?) throws(WebImageError) -> [ImageFormat] {
        var formats: [ImageFormat] = []
        for name in list(text) {
            guard let format = ImageFormat(rawValue: name.lowercased() == "jpg" ? "jpeg" : name.lowercased()) else {
                throw WebImageError(.invalidArgument, "unknown format \"\(name)\"")
            }
            formats.append(format)
        }
        return formats
    }
}
