import WebImage

/// One processing option, declared once: its names (full and short, as imgproxy's docs list
/// them), how many arguments it takes, and how they change the ``ProcessingOptions``. The
/// parser looks an option up by name; a new option is one row in one of the groups.
struct ProcessingOption: Sendable {
    /// Full name first, then the short ones.
    let names: [String]
    /// The most arguments it takes; nil for an option that checks its own (pairs, a list, a
    /// refusal that comes before any count).
    let arguments: Int?
    /// Applies the arguments read by `reader` to `options`, with the parser's defaults and rules.
    let apply: @Sendable (OptionsParser, inout ArgumentReader, inout ProcessingOptions) throws(ProxyError) -> Void

    init(
        _ names: [String], arguments: Int? = nil,
        apply: @escaping @Sendable (OptionsParser, inout ArgumentReader, inout ProcessingOptions) throws(ProxyError) -> Void
    ) {
        self.names = names
        self.arguments = arguments
        self.apply = apply
    }

    /// Every option, by each of its names.
    static let byName: [String: ProcessingOption] = {
        var byName: [String: ProcessingOption] = [:]
        for option in geometry + effects + watermark + output {
            for name in option.names {
                precondition(byName.updateValue(option, forKey: name) == nil, "two options are named \(name)")
            }
        }
        return byName
    }()
}
