/// The samples of a Prometheus text exposition, read back: `/status` shows the figures of the
/// very counters `/metrics` exports by reading the registry's own output.
struct MetricsReading: Sendable {
    /// One line: a series and its value.
    struct Sample: Sendable, Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    let samples: [Sample]

    /// Reads `name{label="value",...} number` lines; comments and lines it cannot read are skipped.
    init(text: String) {
        samples = text.split(separator: "\n").compactMap { Self.sample($0) }
    }

    /// The samples of a series name.
    func samples(named name: String) -> [Sample] {
        samples.filter { $0.name == name }
    }

    /// The value of the series with exactly these labels, 0 when it was never recorded.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double {
        samples.first { $0.name == name && $0.labels == labels }?.value ?? 0
    }

    /// The sum over every series of a name whose labels include `labels`.
    func total(_ name: String, where labels: [String: String] = [:]) -> Double {
        samples(named: name).filter { sample in labels.allSatisfy { sample.labels[$0.key] == $0.value } }.reduce(0) { $0 + $1.value }
    }

    private static func sample(_ line: Substring) -> Sample? {
        guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
            return nil
        }
        let series = line[..<space]
        guard let brace = series.firstIndex(of: "{") else { return Sample(name: String(series), labels: [:], value: value) }
        guard series.last == "}" else { return nil }
        let inside = series[series.index(after: brace)..<series.index(before: series.endIndex)]
        return Sample(name: String(series[..<brace]), labels: labels(inside), value: value)
    }

    /// `a="1",b="x\"y"` as a dictionary, with the exposition format's escapes undone.
    private static func labels(_ text: Substring) -> [String: String] {
        var labels: [String: String] = [:]
        var rest = text[...]
        while let equals = rest.firstIndex(of: "=") {
            let name = rest[..<equals].trimmingPrefix(",")
            var index = rest.index(after: equals)
            guard index < rest.endIndex, rest[index] == "\"" else { break }
            index = rest.index(after: index)
            var value = ""
            while index < rest.endIndex, rest[index] != "\"" {
                if rest[index] == "\\", rest.index(after: index) < rest.endIndex {
                    index = rest.index(after: index)
                    value.append(rest[index] == "n" ? "\n" : rest[index])
                } else {
                    value.append(rest[index])
                }
                index = rest.index(after: index)
            }
            labels[String(name)] = value
            rest = index < rest.endIndex ? rest[rest.index(after: index)...] : ""
        }
        return labels
    }
}
