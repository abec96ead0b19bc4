import Foundation

/// The settings as people read them: `serve --help`'s list and docs/serve.md's table, both
/// made from the rows, so neither can fall behind the code.
extension ServerSetting {
    /// How the flag is written: `--NAME VALUE`, `--NAME VALUE (repeatable)`, `--[no-]NAME`, or
    /// nil for a setting read from the environment only.
    package var usage: String? {
        guard let flag else { return nil }
        switch form {
        case .value(let valueName): return "--\(flag) \(valueName)"
        case .repeatable(let valueName): return "--\(flag) \(valueName) (repeatable)"
        case .flag: return "--\(flag)"
        case .toggle: return "--[no-]\(flag)"
        }
    }

    /// docs/serve.md's table of settings.
    package static var markdownTable: String {
        var lines = ["| flag | variable | default | what |", "|---|---|---|---|"]
        for setting in all {
            let flag = setting.usage.map { "`\($0)`" } ?? "(environment only)"
            let list = if case .repeatable = setting.form { " (commas)" } else { "" }
            lines.append("| \(flag) | `\(setting.variable)`\(list) | \(setting.defaultText) | \(setting.help) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `serve --help`'s list: each flag, its variable and default, and what it does.
    package static var helpText: String {
        all.map { setting in
            let head = setting.usage ?? "(environment only)"
            let text = "\(head) (\(setting.variable), default \(setting.defaultText)): \(setting.help)"
            return text.replacingOccurrences(of: "`", with: "")
        }.joined(separator: "\n")
    }
}
