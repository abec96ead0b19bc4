import WebImage

/// `serve`'s arguments read against the settings' rows: `--FLAG VALUE` or `--FLAG=VALUE` for a
/// value, `--FLAG` for a switch, `--no-FLAG` to turn off one that is on by default. Each flag is
/// a row's, so a new setting needs no new parsing code.
enum SettingArguments {
    /// The values given, by setting name, in order.
    /// - Throws: `WebImageError.Code.invalidArgument` for an unknown flag, a value missing or one
    ///   given to a switch.
    static func read(_ arguments: [String]) throws(WebImageError) -> [String: [String]] {
        var given: [String: [String]] = [:]
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw WebImageError(.invalidArgument, "unexpected argument \"\(argument)\"; settings are --NAME VALUE")
            }
            var name = String(argument.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if let setting = ServerSetting.byFlag[name] {
                switch setting.form {
                case .flag, .toggle:
                    guard inline == nil else { throw WebImageError(.invalidArgument, "--\(name) takes no value") }
                    given[setting.name] = ["true"]
                case .value(let valueName), .repeatable(let valueName):
                    guard let value = inline ?? remaining.popFirst() else {
                        throw WebImageError(.invalidArgument, "--\(name) needs a value (\(valueName))")
                    }
                    given[setting.name, default: []].append(value)
                }
            } else if name.hasPrefix("no-"), inline == nil, let setting = ServerSetting.byFlag[String(name.dropFirst(3))],
                setting.form == .toggle
            {
                given[setting.name] = ["false"]
            } else {
                throw WebImageError(.invalidArgument, "unknown option --\(name) (webimage serve --help lists them)")
            }
        }
        return given
    }
}

extension ServerSetting {
    /// The rows by flag.
    static let byFlag: [String: ServerSetting] = Dictionary(
        all.compactMap { setting in setting.flag.map { ($0, setting) } }, uniquingKeysWith: { first, _ in first })
}
