import WebImage

/// `/info`'s `dominant_colors` (imgproxy Pro's `dc:1:BUILD_MISSED`): the vibrant, light vibrant,
/// dark vibrant, muted, light muted and dark muted colours of an image, the six swatches Android's
/// Palette (API 21, `DefaultGenerator`) names, which imgproxy Pro's answer names too. Pro's code is
/// not public; this is Palette's published method:
///
/// - the image fitted in 100x100, fully transparent pixels left out, and the colours too close to
///   black (lightness at most 0.05), to white (at least 0.95) or on the red I-line (hue 10-37
///   degrees, saturation at most 0.82) dropped;
/// - at most 16 colours: the distinct ones when there are that few, else median-cut boxes (the
///   largest by volume split at the middle of its longest channel), each the population-weighted
///   mean of its colours;
/// - each swatch the colour within its lightness and saturation bounds that scores highest on
///   closeness to the targets (weights 3 for saturation, 6 for lightness) and population (1), no
///   colour used twice;
/// - with `buildMissed`, a missing vibrant made from the dark vibrant at lightness 0.5, and a
///   missing dark vibrant from the vibrant at 0.26 (Palette's `generateEmptySwatches`).
enum DominantColors {
    /// One swatch's name in the answer and its bounds: lightness target, range; saturation target, range.
    struct Target {
        var name: String
        var lightness: (target: Double, range: ClosedRange<Double>)
        var saturation: (target: Double, range: ClosedRange<Double>)
    }

    /// Palette's order of selection.
    static let targets = [
        Target(name: "vibrant", lightness: (0.5, 0.3...0.7), saturation: (1, 0.35...1)),
        Target(name: "light_vibrant", lightness: (0.74, 0.55...1), saturation: (1, 0.35...1)),
        Target(name: "dark_vibrant", lightness: (0.26, 0...0.45), saturation: (1, 0.35...1)),
        Target(name: "muted", lightness: (0.5, 0.3...0.7), saturation: (0.3, 0...0.4)),
        Target(name: "light_muted", lightness: (0.74, 0.55...1), saturation: (0.3, 0...0.4)),
        Target(name: "dark_muted", lightness: (0.26, 0...0.45), saturation: (0.3, 0...0.4)),
    ]

    /// A colour with how many pixels it stands for.
    struct Swatch: Equatable {
        var red: Int
        var green: Int
        var blue: Int
        var population: Int
    }

    /// The swatches found in `pixels`, by name.
    static func swatches(of pixels: PixelBuffer, buildMissed: Bool) -> [String: Swatch] {
        let palette = quantized(histogram(ImageInfo.fitted(pixels, within: 100)), maximumColors: 16).filter { !ignored($0) }
        let highest = palette.map(\.population).max() ?? 1
        var chosen: [String: Swatch] = [:]
        var used: [Swatch] = []
        for target in targets {
            var best: (score: Double, swatch: Swatch)?
            for swatch in palette where !used.contains(swatch) {
                let (_, saturation, lightness) = hsl(swatch)
                guard target.saturation.range.contains(saturation), target.lightness.range.contains(lightness) else { continue }
                let score =
                    (3 * (1 - abs(saturation - target.saturation.target)) + 6 * (1 - abs(lightness - target.lightness.target))
                        + Double(swatch.population) / Double(highest)) / 10
                if score > best?.score ?? -1 { best = (score, swatch) }
            }
            if let best {
                chosen[target.name] = best.swatch
                used.append(best.swatch)
            }
        }
        guard buildMissed else { return chosen }
        if chosen["vibrant"] == nil, let dark = chosen["dark_vibrant"] { chosen["vibrant"] = relit(dark, lightness: 0.5) }
        if chosen["dark_vibrant"] == nil, let vibrant = chosen["vibrant"] { chosen["dark_vibrant"] = relit(vibrant, lightness: 0.26) }
        return chosen
    }

    /// The colours of the pixels that are not fully transparent, with their counts, in a fixed order.
    static func histogram(_ pixels: PixelBuffer) -> [Swatch] {
        var counts: [Int: Int] = [:]
        let bytes = pixels.bytes
        for offset in stride(from: 0, to: bytes.count, by: 4) where bytes[offset + 3] > 0 {
            counts[Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]), default: 0] += 1
        }
        return counts.keys.sorted().map { Swatch(red: $0 >> 16, green: $0 >> 8 & 0xFF, blue: $0 & 0xFF, population: counts[$0] ?? 0) }
            .filter { !ignored($0) }
    }

    /// At most `maximumColors` colours: the histogram's own, or median-cut boxes' means.
    static func quantized(_ colors: [Swatch], maximumColors: Int) -> [Swatch] {
        guard colors.count > maximumColors else { return colors }
        var boxes = [colors[...]]
        while boxes.count < maximumColors {
            // The box of the largest volume that holds more than one colour.
            guard let index = boxes.indices.filter({ boxes[$0].count > 1 }).max(by: { volume(boxes[$0]) < volume(boxes[$1]) }) else {
                break
            }
            let (lower, upper) = split(boxes[index])
            boxes[index] = lower
            boxes.append(upper)
        }
        return boxes.map(mean)
    }

    private static func channels(_ swatch: Swatch) -> [Int] { [swatch.red, swatch.green, swatch.blue] }

    private static func volume(_ box: ArraySlice<Swatch>) -> Int {
        (0..<3).reduce(1) { product, channel in
            let values = box.map { channels($0)[channel] }
            return product * ((values.max() ?? 0) - (values.min() ?? 0) + 1)
        }
    }

    /// The box cut in two along its longest channel, at the middle of that channel's range.
    private static func split(_ box: ArraySlice<Swatch>) -> (ArraySlice<Swatch>, ArraySlice<Swatch>) {
        let ranges = (0..<3).map { channel in
            let values = box.map { channels($0)[channel] }
            return (channel, values.min() ?? 0, values.max() ?? 0)
        }
        let (channel, low, high) = ranges.max { $0.2 - $0.1 < $1.2 - $1.1 } ?? (0, 0, 0)
        let sorted = box.sorted { channels($0)[channel] < channels($1)[channel] }
        let middle = (low + high) / 2
        let cut = min(max(1, sorted.firstIndex { channels($0)[channel] > middle } ?? 1), sorted.count - 1)
        return (sorted[..<cut], sorted[cut...])
    }

    private static func mean(_ box: ArraySlice<Swatch>) -> Swatch {
        let population = box.reduce(0) { $0 + $1.population }
        func average(_ channel: KeyPath<Swatch, Int>) -> Int {
            Int((Double(box.reduce(0) { $0 + $1[keyPath: channel] * $1.population }) / Double(max(1, population))).rounded())
        }
        return Swatch(red: average(\.red), green: average(\.green), blue: average(\.blue), population: population)
    }

    /// Palette's `shouldIgnoreColor`: near black, near white, or on the red I-line.
    static func ignored(_ swatch: Swatch) -> Bool {
        let (hue, saturation, lightness) = hsl(swatch)
        return lightness <= 0.05 || lightness >= 0.95 || ((10...37).contains(hue) && saturation <= 0.82)
    }

    /// Hue in degrees, saturation and lightness in 0...1 (Android's `ColorUtils.RGBToHSL`).
    static func hsl(_ swatch: Swatch) -> (hue: Double, saturation: Double, lightness: Double) {
        let (r, g, b) = (Double(swatch.red) / 255, Double(swatch.green) / 255, Double(swatch.blue) / 255)
        let high = max(r, g, b)
        let low = min(r, g, b)
        let lightness = (high + low) / 2
        guard high != low else { return (0, 0, lightness) }
        let delta = high - low
        let saturation = delta / (1 - abs(2 * lightness - 1))
        var hue: Double
        if high == r {
            hue = ((g - b) / delta).truncatingRemainder(dividingBy: 6)
        } else if high == g {
            hue = (b - r) / delta + 2
        } else {
            hue = (r - g) / delta + 4
        }
        hue *= 60
        if hue < 0 { hue += 360 }
        return (hue, saturation, lightness)
    }

    /// `swatch` with its lightness set, hue and saturation kept; no population of its own.
    static func relit(_ swatch: Swatch, lightness: Double) -> Swatch {
        let (hue, saturation, _) = hsl(swatch)
        let chroma = (1 - abs(2 * lightness - 1)) * saturation
        let x = chroma * (1 - abs((hue / 60).truncatingRemainder(dividingBy: 2) - 1))
        let m = lightness - chroma / 2
        let (r, g, b): (Double, Double, Double)
        switch Int(hue / 60) {
        case 0: (r, g, b) = (chroma, x, 0)
        case 1: (r, g, b) = (x, chroma, 0)
        case 2: (r, g, b) = (0, chroma, x)
        case 3: (r, g, b) = (0, x, chroma)
        case 4: (r, g, b) = (x, 0, chroma)
        default: (r, g, b) = (chroma, 0, x)
        }
        func byte(_ value: Double) -> Int { min(255, max(0, Int(((value + m) * 255).rounded()))) }
        return Swatch(red: byte(r), green: byte(g), blue: byte(b), population: 0)
    }

    /// The answer's member: the swatches found, in name order, each `{"R":…,"G":…,"B":…}`.
    static func json(_ swatches: [String: Swatch]) -> String {
        ImageInfo.object(
            swatches.keys.sorted().compactMap { name in
                swatches[name].map { (name, ImageInfo.object([("R", String($0.red)), ("G", String($0.green)), ("B", String($0.blue))])) }
            })
    }
}
