/// The compact text form of transformers, used by the `webimage` command and the image proxy:
/// steps separated by commas, each a name and `:`-separated arguments, applied in order.
///
/// ```
/// resize:300x200:aspectfill,round:16,blur:4
/// ```
///
/// | step | arguments | transformer |
/// |---|---|---|
/// | `resize:WxH[:MODE][:FILTER]` | mode `fill` (default), `aspectfit` (or `fit`), `aspectfill` (or `cover`); filter `lanczos3` (default), `lanczos2`, `bicubic`, `bilinear`, `nearest` | ``ResizingTransformer`` |
/// | `crop:WxH+X+Y` | size and offset in pixels | ``CroppingTransformer`` |
/// | `centercrop:W:H` | aspect ratio terms | ``CenterCropTransformer`` |
/// | `round:R[:CORNERS[:BORDER[:COLOR]]]` | corners `all` or `tl+tr+bl+br` names; border width; `#rrggbb[aa]` | ``RoundCornerTransformer`` |
/// | `flip:h`, `flip:v`, `flip:hv` | | ``FlippingTransformer`` |
/// | `rotate:DEG[:fit\|crop]` | degrees counter-clockwise; `fit` (default) grows the canvas | ``RotationTransformer`` |
/// | `orient` | | `OrientationTransformer` |
/// | `tint:COLOR` | `#rrggbb[aa]` | ``TintTransformer`` |
/// | `blur:R` | standard deviation in pixels | ``BlurTransformer`` |
/// | `sharpen:SIGMA[:AMOUNT]` | unsharp mask's standard deviation; amount (default 1) | `SharpeningTransformer` |
/// | `pixelate:N` | block side in pixels | `PixelatingTransformer` |
/// | `canvas:WxH+X+Y[:COLOR]` | canvas size, the image's offset on it, fill (default transparent) | `CanvasTransformer` |
/// | `smartcrop:WxH` | result size | `SmartCroppingTransformer` |
/// | `background:COLOR` | `#rrggbb[aa]` | `BackgroundTransformer` |
///
/// Every built-in transformer's ``ImageTransformer/transformerKey`` is its canonical spec, so a
/// key parses back to an equal transformer.
public enum TransformSpec {
    /// The largest width or height a spec may ask for.
    public static let maximumDimension = 20_000
    /// The largest pixel count a spec may ask for (the default decode limit).
    public static let maximumPixelCount = 64_000_000
    /// The largest blur radius.
    public static let maximumBlurRadius = 500.0

    /// The transformer a spec describes: one step gives that transformer, several give a
    /// ``PipelineTransformer``.
    /// - Throws: `WebImageError.Code.invalidTransformSpec` naming the step and the problem.
    public static func parse(_ spec: String) throws(WebImageError) -> any ImageTransformer {
        let steps = spec.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard !spec.trimmingCharacters(in: .whitespaces).isEmpty else { throw invalid("the spec is empty") }
        var transformers: [any ImageTransformer] = []
        for (index, step) in steps.enumerated() {
            do throws(StepError) {
                transformers.append(try parseStep(step))
            } catch {
                throw invalid("step \(index + 1) (\"\(step)\"): \(error.reason)")
            }
        }
        return transformers.count == 1 ? transformers[0] : PipelineTransformer(transformers)
    }

    /// A number as keys write it: no fraction when whole (`4`, not `4.0`).
    package static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    private struct StepError: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private static func invalid(_ message: String) -> WebImageError {
        WebImageError(.invalidTransformSpec, message)
    }

    private static func parseStep(_ step: String) throws(StepError) -> any ImageTransformer {
        let parts = step.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let arguments = Array(parts.dropFirst())
        switch parts[0].lowercased() {
        case "resize": return try resize(arguments)
        case "crop": return try crop(arguments)
        case "centercrop":
            try expectCount(arguments, 2...2, usage: "centercrop:W:H")
            return CenterCropTransformer(
                aspectWidth: try integer(arguments[0], "ratio width", 1...maximumDimension),
                aspectHeight: try integer(arguments[1], "ratio height", 1...maximumDimension))
        case "round": return try round(arguments)
        case "flip":
            try expectCount(arguments, 1...1, usage: "flip:h, flip:v or flip:hv")
            let axes = arguments[0].lowercased()
            guard ["h", "v", "hv", "vh"].contains(axes) else { throw StepError("flip takes h, v or hv, not \"\(arguments[0])\"") }
            return FlippingTransformer(horizontal: axes.contains("h"), vertical: axes.contains("v"))
        case "rotate":
            try expectCount(arguments, 1...2, usage: "rotate:DEG[:fit|crop]")
            let degrees = try number(arguments[0], "angle", -1e6...1e6)
            guard arguments.count == 1 || ["fit", "crop"].contains(arguments[1].lowercased()) else {
                throw StepError("rotate's second argument is fit or crop, not \"\(arguments[1])\"")
            }
            return RotationTransformer(degrees: degrees, fitsSize: arguments.count == 1 || arguments[1].lowercased() == "fit")
        case "orient":
            try expectCount(arguments, 0...0, usage: "orient")
            return OrientationTransformer()
        case "tint":
            try expectCount(arguments, 1...1, usage: "tint:#rrggbb")
            return TintTransformer(color: try color(arguments[0]))
        case "blur":
            try expectCount(arguments, 1...1, usage: "blur:R")
            return BlurTransformer(radius: try number(arguments[0], "radius", 0...maximumBlurRadius))
        case "sharpen":
            try expectCount(arguments, 1...2, usage: "sharpen:SIGMA[:AMOUNT]")
            return SharpeningTransformer(
                sigma: try number(arguments[0], "sigma", 0...maximumBlurRadius),
                amount: arguments.count > 1 ? try number(arguments[1], "amount", 0...100) : 1)
        case "pixelate":
            try expectCount(arguments, 1...1, usage: "pixelate:N")
            return PixelatingTransformer(blockSize: try integer(arguments[0], "block size", 1...maximumDimension))
        case "canvas": return try canvas(arguments)
        case "smartcrop":
            try expectCount(arguments, 1...1, usage: "smartcrop:WxH")
            let (width, height) = try size(arguments[0])
            return SmartCroppingTransformer(width: width, height: height)
        case "background":
            try expectCount(arguments, 1...1, usage: "background:#rrggbb")
            return BackgroundTransformer(color: try color(arguments[0]))
        case "":
            throw StepError("empty step")
        default:
            throw StepError("unknown transform \"\(parts[0])\" (known: \(knownSteps))")
        }
    }

    private static func resize(_ arguments: [String]) throws(StepError) -> any ImageTransformer {
        try expectCount(arguments, 1...3, usage: "resize:WxH[:MODE][:FILTER]")
        let (width, height) = try size(arguments[0])
        var mode = ResizeMode.fill
        var filter = ResamplingFilter.lanczos3
        for argument in arguments.dropFirst() {
            let name = argument.lowercased()
            if let parsed = ResizeMode(rawValue: name) ?? ["fit": .aspectFit, "cover": .aspectFill][name] {
                mode = parsed
            } else if let parsed = ResamplingFilter(rawValue: name) {
                filter = parsed
            } else {
                throw StepError(
                    "\"\(argument)\" is neither a mode (fill, aspectfit, aspectfill) nor a filter (\(ResamplingFilter.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
        }
        return ResizingTransformer(width: width, height: height, mode: mode, filter: filter)
    }

    /// The step names, as error messages list them.
    static let knownSteps =
        "resize, crop, centercrop, round, flip, rotate, orient, tint, blur, sharpen, pixelate, canvas, smartcrop, background"

    private static func canvas(_ arguments: [String]) throws(StepError) -> any ImageTransformer {
        try expectCount(arguments, 1...2, usage: "canvas:WxH+X+Y[:COLOR]")
        let pieces = arguments[0].split(separator: "+", omittingEmptySubsequences: false).map(String.init)
        guard pieces.count == 3 else { throw StepError("canvas takes WxH+X+Y, not \"\(arguments[0])\"") }
        let (width, height) = try size(pieces[0])
        let offsets = -maximumDimension...maximumDimension
        return CanvasTransformer(
            width: width, height: height, x: try integer(pieces[1], "x", offsets), y: try integer(pieces[2], "y", offsets),
            color: arguments.count > 1 ? try color(arguments[1]) : .clear)
    }

    private static func crop(_ arguments: [String]) throws(StepError) -> any ImageTransformer {
        try expectCount(arguments, 1...1, usage: "crop:WxH+X+Y")
        let pieces = arguments[0].split(separator: "+", omittingEmptySubsequences: false).map(String.init)
        guard pieces.count == 3 else { throw StepError("crop takes WxH+X+Y, not \"\(arguments[0])\"") }
        let (width, height) = try size(pieces[0])
        return CroppingTransformer(
            x: try integer(pieces[1], "x", 0...maximumDimension * 10), y: try integer(pieces[2], "y", 0...maximumDimension * 10),
            width: width, height: height)
    }

    private static func round(_ arguments: [String]) throws(StepError) -> any ImageTransformer {
        try expectCount(arguments, 1...4, usage: "round:R[:CORNERS[:BORDER[:COLOR]]]")
        let radius = try number(arguments[0], "radius", 0...Double(maximumDimension))
        var corners = RectCorners.all
        if arguments.count > 1, arguments[1].lowercased() != "all" {
            corners = []
            for name in arguments[1].lowercased().split(separator: "+", omittingEmptySubsequences: false) {
                guard let corner = RectCorners.names.first(where: { $0.0 == name })?.1 else {
                    throw StepError("unknown corner \"\(name)\" (known: all, tl, tr, bl, br)")
                }
                corners.insert(corner)
            }
        }
        let border = arguments.count > 2 ? try number(arguments[2], "border width", 0...Double(maximumDimension)) : 0
        let borderColor = arguments.count > 3 ? try color(arguments[3]) : .black
        return RoundCornerTransformer(radius: radius, corners: corners, borderWidth: border, borderColor: borderColor)
    }

    private static func expectCount(_ arguments: [String], _ range: ClosedRange<Int>, usage: String) throws(StepError) {
        guard range.contains(arguments.count) else { throw StepError("expected \(usage)") }
    }

    private static func size(_ text: String) throws(StepError) -> (Int, Int) {
        let sides = text.lowercased().split(separator: "x", omittingEmptySubsequences: false).map(String.init)
        guard sides.count == 2 else { throw StepError("a size is WxH, not \"\(text)\"") }
        let width = try integer(sides[0], "width", 1...maximumDimension)
        let height = try integer(sides[1], "height", 1...maximumDimension)
        guard width * height <= maximumPixelCount else { throw StepError("\(width)x\(height) is more than \(maximumPixelCount) pixels") }
        return (width, height)
    }

    private static func integer(_ text: String, _ name: String, _ range: ClosedRange<Int>) throws(StepError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw StepError("\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound), not \"\(text)\"")
        }
        return value
    }

    private static func number(_ text: String, _ name: String, _ range: ClosedRange<Double>) throws(StepError) -> Double {
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw StepError("\(name) must be a number in \(format(range.lowerBound))...\(format(range.upperBound)), not \"\(text)\"")
        }
        return value
    }

    private static func color(_ text: String) throws(StepError) -> RGBAColor {
        guard let color = RGBAColor(hex: text) else { throw StepError("a colour is #rrggbb or #rrggbbaa, not \"\(text)\"") }
        return color
    }
}
