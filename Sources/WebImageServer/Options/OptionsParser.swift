package import Foundation
package import WebImage

/// Turns the option segments of a proxy path into ``ProcessingOptions``, with imgproxy's names
/// (full and short), argument order and defaults. Empty arguments keep the default
/// (`rs:fit::300`); booleans are `1`/`t`/`true` or `0`/`f`/`false`. Every mistake is a 400 whose
/// reason names the option: an unknown name, too many arguments, a number that is not one or is
/// negative, a size over the output limit, an unknown format. Presets (`pr:NAME`) expand in
/// place, presets inside them too (one already being expanded is skipped, as imgproxy skips it);
/// a preset named `default` applies before every URL's own options.
package struct OptionsParser: Sendable {
    /// Named option lists (`thumb` → `rs:fill:150:150/q:70`), parsed at start-up.
    package let presets: [String: [Substring]]
    /// The formats the server can write.
    package let encodableFormats: Set<ImageFormat>
    /// The option names a URL may use itself, as it spells them (imgproxy's
    /// `IMGPROXY_ALLOWED_PROCESSING_OPTIONS`); presets may use any. Nil allows every option.
    package let allowedOptions: Set<String>?
    /// What every parse starts from: imgproxy's defaults, or the server's own for the options
    /// imgproxy lets its configuration set (`IMGPROXY_STRIP_METADATA`, `_STRIP_COLOR_PROFILE`,
    /// `_AUTO_ROTATE`).
    package let baseOptions: ProcessingOptions
    /// What separates an option's name and arguments (`IMGPROXY_ARGUMENTS_SEPARATOR`). Default `:`.
    package let argumentsSeparator: String
    /// Whether URLs and presets may set their own limits with `msr`, `msfs`, `maf`, `mafr` and
    /// `mrd` (`IMGPROXY_ALLOW_SECURITY_OPTIONS`); without it those options answer 403. Default false.
    package let allowsSecurityOptions: Bool

    /// What a URL's `autoquality` starts from (`IMGPROXY_AUTOQUALITY_TARGET`, `_MIN`, `_MAX`):
    /// imgproxy's defaults, a target of 0 bytes until one is given.
    package let autoqualityDefaults: Autoquality

    /// A parser with the given presets.
    package init(
        presets: [String: String] = [:],
        encodableFormats: Set<ImageFormat> = [.jpeg, .png, .webP, .gif], allowedOptions: Set<String>? = nil,
        baseOptions: ProcessingOptions = ProcessingOptions(), argumentsSeparator: String = ":", allowsSecurityOptions: Bool = false,
        autoqualityDefaults: Autoquality = Autoquality(target: 0)
    ) {
        self.autoqualityDefaults = autoqualityDefaults
        self.presets = presets.mapValues { $0.split(separator: "/") }
        self.encodableFormats = encodableFormats
        self.allowedOptions = allowedOptions
        self.baseOptions = baseOptions
        self.argumentsSeparator = argumentsSeparator
        self.allowsSecurityOptions = allowsSecurityOptions
    }

    /// The client's hints (`Sec-CH-DPR`/`DPR`, `Sec-CH-Width`/`Width`), defaults under every
    /// preset and option, as imgproxy's `IMGPROXY_ENABLE_CLIENT_HINTS` takes them.
    package struct ClientHints: Sendable, Equatable {
        /// The device pixel ratio, 0 < dpr <= 8; nil without a usable hint.
        package var dpr: Double?
        /// The width in device pixels; nil without a usable hint.
        package var width: Int?

        /// The hints of a request's headers (the `Sec-CH-` form first), values out of range left out.
        package init(dpr: [String?], width: [String?]) {
            self.dpr = dpr.lazy.compactMap { $0.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } }.first { $0 > 0 && $0 <= 8 }
            self.width = width.lazy.compactMap { $0.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } }.first { $0 > 0 }
        }
    }

    /// The options `segments` ask for; `extensionName` is the path's extension, which sets the
    /// format over any `format` option, as imgproxy applies it after the URL's options. `hints` set the defaults first: the DPR, and the
    /// width in CSS pixels (the hinted device width divided by the DPR, rounded).
    package func parse(_ segments: [Substring], extensionName: String? = nil, hints: ClientHints? = nil, now: Date = Date())
        throws(ProxyError) -> ProcessingOptions
    {
        var options = baseOptions
        if let hints {
            if let dpr = hints.dpr { options.dpr = dpr }
            if let width = hints.width { options.width = Int((Double(width) / (hints.dpr ?? 1)).rounded()) }
        }
        if let defaults = presets["default"] { try apply(defaults, to: &options, presetChain: ["default"]) }
        try apply(segments, to: &options, presetChain: [])
        // After the options, so the extension wins over `format`; not for `raw`, whose bytes are
        // answered as they are (imgproxy's parsePathOptions).
        if let extensionName, !options.raw { try setFormat(extensionName, option: "extension", in: &options) }
        if let expires = options.expires, Double(expires) < now.timeIntervalSince1970 {
            throw ProxyError(status: 404, "the URL expired at \(expires) (expires)")
        }
        // No size is refused here: the plan scales a result over the dimension limit down to
        // fit, judged on the result it makes (imgproxy's limitScale), so a box that `enlarge`'s
        // absence would clamp anyway is not refused for its size.
        return options
    }

    /// Each preset applied once to the base options, as imgproxy's `validatePresets` does at
    /// start-up, so that a preset with a mistake stops the server rather than every request
    /// that names it. A preset may use any option, whatever ``allowedOptions`` says.
    /// - Throws: the first mistake, its reason naming the preset.
    package func validatePresets() throws(ProxyError) {
        for name in presets.keys.sorted() {
            var options = baseOptions
            do {
                try apply(presets[name] ?? [], to: &options, presetChain: [name])
            } catch {
                throw ProxyError(status: Int(error.status.code), "error in preset `\(name)`: \(error.reason)")
            }
        }
    }

    /// The presets of imgproxy's `IMGPROXY_PRESETS` entries (and `IMGPROXY_PRESETS_PATH`'s lines),
    /// read as its `parsePreset` reads them: trimmed; empty ones and `#` comments skipped; each
    /// `NAME=OPTIONS` with one `=`, a name and options, every segment an option (one with
    /// `separator`).
    /// - Throws: 400 naming the entry that is not so.
    package static func presets(parsing entries: [String], separator: String = ":") throws(ProxyError) -> [String: String] {
        var presets: [String: String] = [:]
        for entry in entries.map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty && !entry.hasPrefix("#") {
            let parts = entry.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw .badRequest("a preset is NAME=OPTIONS, not \"\(entry)\"") }
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { throw .badRequest("the preset \"\(entry)\" has no name") }
            guard !value.isEmpty else { throw .badRequest("the preset \"\(entry)\" has no options") }
            guard value.split(separator: "/").allSatisfy({ $0.contains(separator) }) else {
                throw .badRequest("the preset \"\(entry)\" has a segment that is not an option")
            }
            presets[name] = value
        }
        return presets
    }

    /// Applies `segments`; `presetChain` names the presets being expanded, outermost first
    /// (empty for the URL's own options, which alone are held to ``allowedOptions``).
    private func apply(_ segments: [Substring], to options: inout ProcessingOptions, presetChain: [String]) throws(ProxyError) {
        for segment in segments {
            let parts =
                argumentsSeparator == ":"
                ? segment.split(separator: ":", omittingEmptySubsequences: false)
                : segment.components(separatedBy: argumentsSeparator).map { Substring($0) }
            let name = String(parts[0])
            let arguments = Array(parts.dropFirst())
            if presetChain.isEmpty, let allowedOptions, !allowedOptions.contains(name) {
                // imgproxy answers a forbidden option as an invalid URL: 404.
                throw .notFound("the option \(name) is not allowed here")
            }
            if name == "preset" || name == "pr" {
                for presetName in arguments.map(String.init) where !presetName.isEmpty {
                    guard let preset = presets[presetName] else { throw .badRequest("unknown preset \"\(presetName)\" (preset)") }
                    // A preset may name presets; one already being expanded is skipped, as
                    // imgproxy skips it, so that a loop ends.
                    guard !presetChain.contains(presetName) else { continue }
                    try apply(preset, to: &options, presetChain: presetChain + [presetName])
                }
                continue
            }
            var reader = ArgumentReader(option: name, arguments: arguments)
            try apply(name, &reader, to: &options)
        }
    }

    private func apply(_ name: String, _ reader: inout ArgumentReader, to options: inout ProcessingOptions) throws(ProxyError) {
        guard let option = ProcessingOption.byName[name] else { throw .badRequest("unknown option \"\(name)\"") }
        if let most = option.arguments { try reader.expect(at: most) }
        try option.apply(self, &reader, &options)
    }

    /// A security option (imgproxy's `options/parser/apply.go`): resolutions in megapixels, 0 or
    /// more; file size and result dimension whole numbers; frames above 0. Refused with 403, in
    /// presets too, unless the server allows them.
    func applySecurity(_ name: String, _ reader: inout ArgumentReader, to limits: inout ProcessingOptions.SecurityLimits)
        throws(ProxyError)
    {
        guard allowsSecurityOptions else { throw .forbidden("security options (\(name)) are not allowed on this server") }
        try reader.expect(at: 1)
        guard reader.text(0) != nil else { throw reader.failure("takes a value") }
        switch name {
        case "max_src_resolution", "msr":
            limits.sourcePixels = try reader.number(0, maximum: 1_000_000).map { Int($0 * 1_000_000) }
        case "max_src_file_size", "msfs":
            limits.sourceBytes = try reader.integer(0, maximum: Int(Int32.max))
        case "max_animation_frames", "maf":
            guard let frames = try reader.integer(0, maximum: 1_000_000), frames > 0 else { throw reader.failure("must be above 0") }
            limits.animationFrames = frames
        case "max_animation_frame_resolution", "mafr":
            limits.animationFramePixels = try reader.number(0, maximum: 1_000_000).map { Int($0 * 1_000_000) }
        default:
            limits.resultDimension = try reader.integer(0, maximum: 1_000_000)
        }
    }

    /// Width, height, enlarge and extend from `start`: `size`'s arguments, and `resize`'s after the type.
    /// `extend`'s gravity and offsets follow it, as imgproxy's `applySizeOption` hands the rest
    /// of its arguments to `extend`.
    func readSize(_ reader: inout ArgumentReader, from start: Int, into options: inout ProcessingOptions) throws(ProxyError) {
        options.width = try reader.integer(start) ?? options.width
        options.height = try reader.integer(start + 1) ?? options.height
        options.enlarge = try reader.boolean(start + 2) ?? options.enlarge
        options.extend = try reader.boolean(start + 3) ?? options.extend
        options.extendGravity = try reader.gravity(from: start + 4, allowsSmart: false) ?? options.extendGravity
    }

    /// The URL's format, or `best` (imgproxy Pro's): the smallest of the candidate formats.
    func setFormat(_ text: String, option: String, in options: inout ProcessingOptions) throws(ProxyError) {
        if text.lowercased() == "best" {
            options.format = nil
            options.bestFormat = true
        } else {
            options.format = try format(text, option: option)
            options.bestFormat = false
        }
    }

    func format(_ text: String, option: String) throws(ProxyError) -> ImageFormat {
        let name = text.lowercased()
        guard let format = ImageFormat(rawValue: name == "jpg" ? "jpeg" : name) else {
            throw .badRequest("unknown format \"\(text)\" (\(option))")
        }
        // SVG is taken: an SVG source asked for as SVG is answered as it is (``ImageProcessor``),
        // any other is refused there. A format nothing writes is a 422, as imgproxy answers it
        // (`integration_test/processing_handler_test.go`, `TestResultingFormatNotSupported`).
        guard encodableFormats.contains(format) || format == .svg else {
            throw .unprocessable("this server cannot write \(format.rawValue) (\(option))")
        }
        return format
    }
}

/// The arguments of one option, read by position, each mistake naming the option.
struct ArgumentReader {
    let option: String
    let arguments: [Substring]

    init(option: String, arguments: [Substring]) {
        self.option = option
        self.arguments = arguments
    }

    func failure(_ reason: String) -> ProxyError { .badRequest("\(option): \(reason)") }

    func expect(at most: Int) throws(ProxyError) {
        guard arguments.count <= most else {
            throw failure("takes at most \(most) argument\(most == 1 ? "" : "s"), not \(arguments.count)")
        }
    }

    /// The argument at `index`, nil when absent or empty.
    func text(_ index: Int) -> Substring? {
        index < arguments.count && !arguments[index].isEmpty ? arguments[index] : nil
    }

    func integer(_ index: Int, maximum: Int = 1_000_000_000) throws(ProxyError) -> Int? {
        guard let text = text(index) else { return nil }
        guard let value = Int(text), value >= 0, value <= maximum else {
            throw failure("\"\(text)\" is not a whole number in 0...\(maximum)")
        }
        return value
    }

    /// A Unix time up to the end of year 9999; nil for none, and for 0 or less, which mean none.
    func unixTime(_ index: Int) throws(ProxyError) -> Int? {
        guard let text = text(index) else { return nil }
        guard let value = Int(text), value <= 253_402_300_799 else { throw failure("\"\(text)\" is not a Unix time") }
        return value > 0 ? value : nil
    }

    func signedInteger(_ index: Int) throws(ProxyError) -> Int? {
        guard let text = text(index) else { return nil }
        guard let value = Int(text), abs(value) <= 1_000_000 else { throw failure("\"\(text)\" is not a whole number") }
        return value
    }

    func number(_ index: Int, maximum: Double = 1_000_000_000) throws(ProxyError) -> Double? {
        guard let text = text(index) else { return nil }
        guard let value = Double(text), value.isFinite, value >= 0, value <= maximum else {
            throw failure("\"\(text)\" is not a number in 0...\(TransformSpec.format(maximum))")
        }
        return value
    }

    func positive(_ index: Int) throws(ProxyError) -> Double? {
        guard let value = try number(index, maximum: 100) else { return nil }
        guard value > 0 else { throw failure("must be above 0") }
        return value
    }

    func boolean(_ index: Int) throws(ProxyError) -> Bool? {
        guard let text = text(index) else { return nil }
        switch text.lowercased() {
        case "1", "t", "true": return true
        case "0", "f", "false": return false
        default: throw failure("\"\(text)\" is not a boolean (1, t, true, 0, f, false)")
        }
    }

    func resizingType(_ index: Int) throws(ProxyError) -> ProcessingOptions.ResizingType? {
        guard let text = text(index) else { return nil }
        guard let type = ProcessingOptions.ResizingType(rawValue: String(text)) else {
            throw failure("unknown resizing type \"\(text)\" (fit, fill, fill-down, force, auto)")
        }
        return type
    }

    /// A gravity from `start`: a type and two offsets (fractions for `fp`). `extend`'s canvas
    /// has no smart gravity (imgproxy's `ExtendGravityTypes`).
    func gravity(from start: Int, allowsSmart: Bool = true) throws(ProxyError) -> Gravity? {
        guard let name = text(start) else { return nil }
        guard let kind = Gravity.Kind(rawValue: String(name)), allowsSmart || kind != .smart else {
            let kinds = Gravity.Kind.allCases.filter { allowsSmart || $0 != .smart }.map(\.rawValue)
            throw failure("unknown gravity \"\(name)\" (\(kinds.joined(separator: ", ")))")
        }
        guard kind != .smart || text(start + 1) == nil else { throw failure("sm takes no offsets") }
        // imgproxy's `parseGravity`: a focus point's two shares in 0...1; compass offsets of
        // either sign, pixels from 1 up and shares of the size below 1.
        if kind == .focusPoint {
            return Gravity(kind, x: try number(start + 1, maximum: 1) ?? 0.5, y: try number(start + 2, maximum: 1) ?? 0.5)
        }
        return Gravity(kind, x: try signedNumber(start + 1) ?? 0, y: try signedNumber(start + 2) ?? 0)
    }

    /// CSS shorthand: one value for all sides, two for vertical and horizontal, and so on.
    func padding() throws(ProxyError) -> ProcessingOptions.Padding? {
        var values: [Int] = []
        for index in arguments.indices { values.append(try integer(index, maximum: 10_000) ?? 0) }
        guard !values.isEmpty else { return nil }
        let top = values[0]
        let right = values.count > 1 ? values[1] : top
        let bottom = values.count > 2 ? values[2] : top
        let left = values.count > 3 ? values[3] : right
        guard top + right + bottom + left > 0 else { return nil }
        return ProcessingOptions.Padding(top: top, right: right, bottom: bottom, left: left)
    }

    /// `R:G:B` or a hex colour; no arguments (or empty ones) turn the background off.
    func color() throws(ProxyError) -> RGBAColor? {
        let given = arguments.filter { !$0.isEmpty }
        switch given.count {
        case 0: return nil
        case 1:
            return try hexColor(given[0])
        case 3:
            var channels: [UInt8] = []
            for index in 0..<3 { channels.append(UInt8(try integer(index, maximum: 255) ?? 0)) }
            return RGBAColor(red: channels[0], green: channels[1], blue: channels[2])
        default:
            throw failure("takes R:G:B or a hex colour")
        }
    }

    /// `wm`'s arguments (imgproxy's `applyWatermarkOption`): an opacity in 0...1 (required), a
    /// compass point or `re`, two offsets that may be negative or fractional, a scale above 0.
    func watermark() throws(ProxyError) -> ProcessingOptions.Watermark {
        guard let given = text(0), let opacity = Double(given), opacity.isFinite, (0...1).contains(opacity) else {
            throw failure("the opacity \"\(arguments.first ?? "")\" is not a number in 0...1")
        }
        var watermark = ProcessingOptions.Watermark(opacity: opacity)
        if let position = text(1) {
            if position == "re" {
                watermark.replicate = true
            } else {
                guard let kind = Gravity.Kind(rawValue: String(position)), kind != .smart, kind != .focusPoint else {
                    throw failure("unknown position \"\(position)\" (re, ce, no, so, ea, we, noea, nowe, soea, sowe)")
                }
                watermark.position = kind
            }
        }
        watermark.x = try signedNumber(2) ?? 0
        watermark.y = try signedNumber(3) ?? 0
        if let scale = try number(4, maximum: 100) {
            guard scale > 0 else { throw failure("the scale must be above 0") }
            watermark.scale = scale
        }
        return watermark
    }

    /// imgproxy Pro's resizing algorithm names.
    func resizingAlgorithm(_ index: Int) throws(ProxyError) -> ResamplingFilter? {
        guard let text = text(index) else { return nil }
        let filters: [Substring: ResamplingFilter] = [
            "nearest": .nearest, "linear": .bilinear, "cubic": .bicubic, "lanczos2": .lanczos2, "lanczos3": .lanczos3,
        ]
        guard let filter = filters[text] else {
            throw failure("unknown algorithm \"\(text)\" (nearest, linear, cubic, lanczos2, lanczos3)")
        }
        return filter
    }

    func unsharpMode(_ index: Int) throws(ProxyError) -> UnsharpMasking.Mode? {
        guard let text = text(index) else { return nil }
        guard let mode = UnsharpMasking.Mode(rawValue: String(text)) else {
            throw failure("unknown mode \"\(text)\" (auto, none, always)")
        }
        return mode
    }

    /// `METHOD:TARGET:MIN:MAX:ALLOWED_ERROR`, each from `defaults` when empty; nil for `none`.
    /// Only the `size` method is here: `dssim` and `ml` need a perceptual metric this server
    /// does not have, and are refused rather than ignored.
    func autoquality(defaults: Autoquality) throws(ProxyError) -> Autoquality? {
        let method = text(0).map(String.init) ?? "size"
        switch method {
        case "none": return nil
        case "size": break
        case "dssim", "ml": throw failure("the \(method) method is not supported here; use size or none")
        default: throw failure("unknown method \"\(method)\" (none, size)")
        }
        var quality = defaults
        quality.target = try integer(1) ?? quality.target
        quality.minimum = try integer(2, maximum: 100) ?? quality.minimum
        quality.maximum = try integer(3, maximum: 100) ?? quality.maximum
        _ = try number(4, maximum: 1)  // the allowed DSSIM error: read for its errors, unused by `size`
        guard quality.target > 0 else { throw failure("the size method needs a target size in bytes above 0") }
        guard quality.minimum >= 1, quality.minimum <= quality.maximum else {
            throw failure("the qualities must be 1 <= min <= max <= 100, not \(quality.minimum) and \(quality.maximum)")
        }
        return quality
    }

    /// A brightness, a whole number in -255...255.
    func brightness(_ index: Int) throws(ProxyError) -> Int? {
        guard let text = text(index) else { return nil }
        guard let value = Int(text), (-255...255).contains(value) else { throw failure("\"\(text)\" is not a whole number in -255...255") }
        return value
    }

    /// A number that may be negative or fractional, within ±1,000,000.
    func signedNumber(_ index: Int) throws(ProxyError) -> Double? {
        guard let text = text(index) else { return nil }
        guard let value = Double(text), value.isFinite, abs(value) <= 1_000_000 else { throw failure("\"\(text)\" is not a number") }
        return value
    }

    /// A colour as imgproxy's `RGBFromHex` reads it: `rrggbb`, or `rgb` with each digit doubled.
    /// The hex colour at `index`, nil when absent or empty.
    func hexColor(at index: Int) throws(ProxyError) -> RGBAColor? {
        guard let text = text(index) else { return nil }
        return try hexColor(text)
    }

    func hexColor(_ text: Substring) throws(ProxyError) -> RGBAColor {
        let digits = text.count == 3 ? String(text.flatMap { [$0, $0] }) : String(text)
        guard digits.count == 6, let color = RGBAColor(hex: digits) else {
            throw failure("\"\(text)\" is not a hex colour (rrggbb or rgb)")
        }
        return color
    }

    /// A file name, base64url-encoded when the second argument is true.
    func filename() throws(ProxyError) -> String? {
        guard let name = text(0) else { return nil }
        guard try boolean(1) == true else { return name.removingPercentEncoding ?? String(name) }
        guard let bytes = URLSigner.bytes(base64URL: name), let decoded = String(bytes: bytes, encoding: .utf8) else {
            throw failure("\"\(name)\" is not valid URL-safe base64")
        }
        return decoded
    }
}

extension ProcessingOptions.Watermark {
    /// A copy changed by `change`.
    func with(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }

    /// This placement with the paid edition's extras (URL, text, shadow, size, rotation) another `wm…` option set.
    func with(extrasOf other: Self?) -> Self {
        guard let other else { return self }
        return with {
            $0.url = other.url
            $0.text = other.text
            $0.shadow = other.shadow
            $0.size = other.size
            $0.rotation = other.rotation
        }
    }
}
