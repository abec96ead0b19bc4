import Foundation
import WebImage

/// One setting of the image server, declared once: its `serve` flag, its `WEBIMAGE_` variable,
/// the imgproxy variable it stands for, how its text is read, the rule its value keeps, its
/// default and what `--help` and docs/serve.md say of it. ``ServeSettings`` reads every row from
/// the arguments and the environment; ``ImageServerConfiguration/validate()`` checks every row's
/// rule, so an application that sets the configuration in code is held to the same ranges as the
/// command. A new setting is one row in ``ServerSetting/all``.
package struct ServerSetting: Sendable {
    /// How the setting is written on the command line.
    package enum Form: Sendable, Equatable {
        /// `--FLAG VALUE`; given twice, the last wins.
        case value(String)
        /// `--FLAG VALUE`, repeatable; commas separate the values in the variable.
        case repeatable(String)
        /// `--FLAG`, off unless given.
        case flag
        /// `--FLAG` or `--no-FLAG`, on unless turned off.
        case toggle
    }

    /// The variable's name after `WEBIMAGE_`.
    package let name: String
    /// The flag's name after `--`; nil for a setting read from the environment only.
    package let flag: String?
    package let form: Form
    /// imgproxy's variable for it and how imgproxy reads that, if imgproxy has one.
    package let imgproxy: ImgproxyVariable?
    /// The default as the docs show it.
    package let defaultText: String
    /// What it does: one line of `--help` and the last column of docs/serve.md's table.
    package let help: String
    /// Whether the variable set and empty is a value (else it is unset).
    let keepsEmpty: Bool
    /// Reads the values given (the flag's, in order, or the variable's) into the settings.
    let read: @Sendable ([String], inout ServeSettings) throws(WebImageError) -> Void
    /// What breaks the setting's rule in the configuration, after its name ("is 1-100"), else nil.
    let rule: (@Sendable (ImageServerConfiguration) -> String?)?

    /// A row; the flag is the name in lower case with dashes unless given.
    init(
        _ name: String, flag: String?? = .none, form: Form, imgproxy: ImgproxyVariable? = nil, default defaultText: String,
        help: String, keepsEmpty: Bool = false,
        read: @escaping @Sendable ([String], inout ServeSettings) throws(WebImageError) -> Void,
        rule: (@Sendable (ImageServerConfiguration) -> String?)? = nil
    ) {
        self.name = name
        self.flag = flag ?? name.lowercased().replacingOccurrences(of: "_", with: "-")
        self.form = form
        self.imgproxy = imgproxy
        self.defaultText = defaultText
        self.help = help
        self.keepsEmpty = keepsEmpty
        self.read = read
        self.rule = rule
    }

    /// `WEBIMAGE_NAME`.
    package var variable: String { "WEBIMAGE_" + name }

    /// How a message names the setting: its flag, else its variable.
    package var label: String { flag.map { "--" + $0 } ?? variable }

    /// The settings' rows whose rule the configuration breaks, as messages.
    package static func brokenRules(of configuration: ImageServerConfiguration) -> [String] {
        all.compactMap { setting in setting.rule?(configuration).map { "\(setting.label) \($0)" } }
    }
}

/// An imgproxy variable a setting stands for, and how imgproxy reads its value.
package struct ImgproxyVariable: Sendable, Equatable {
    /// How imgproxy reads a value (its `env` types).
    package enum Reading: Sendable, Equatable {
        /// A string, as it is.
        case text
        /// A comma-separated list, trimmed.
        case list
        /// A boolean as Go's `strconv.ParseBool` reads it.
        case boolean
        /// `strconv.Atoi`, durations in whole seconds included.
        case integer
        /// An integer whose 0 means "no limit" in imgproxy: our bound stays, with a warning.
        case limit
        /// An integer whose 0 has no counterpart here: our default stays, with a warning.
        case positive
        /// Comma-separated hex (keys and salts).
        case hexList
        /// `host:port`, or `:port` for every interface.
        case bind
        /// A decimal number (megapixels, an opacity).
        case decimal
        /// debug, info, warn or error.
        case logLevel
        /// pretty or structured (text here), json or gcp (JSON lines here).
        case logFormat
        /// Presets split by `IMGPROXY_PRESETS_SEPARATOR`.
        case presets
    }

    /// `IMGPROXY_…`.
    package let name: String
    package let reading: Reading

    init(_ name: String, _ reading: Reading) {
        self.name = "IMGPROXY_" + name
        self.reading = reading
    }
}
