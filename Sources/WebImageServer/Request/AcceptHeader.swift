/// An `Accept` header's media ranges with their weights (RFC 9110 section 12.5.1), for format
/// negotiation: `image/webp;q=0` refuses WebP, where a substring match took it for a yes.
struct AcceptHeader: Equatable {
    /// Each named type, lower-cased, with its `q` (1 when not given).
    let weights: [String: Double]

    init(_ header: String?) {
        var weights: [String: Double] = [:]
        for range in (header ?? "").lowercased().split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let type = parts.first, !type.isEmpty else { continue }
            var quality = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                // A malformed weight refuses the range rather than guessing a yes.
                quality = Double(parameter.dropFirst(2)).map { min(max($0, 0), 1) } ?? 0
            }
            weights[type] = max(weights[type] ?? 0, quality)
        }
        self.weights = weights
    }

    /// Whether `type` is named with a weight above 0. Wildcards do not count: every browser
    /// sends `*/*`, and a format is offered only to clients that name it, as imgproxy does.
    func names(_ type: String) -> Bool {
        (weights[type] ?? 0) > 0
    }
}
