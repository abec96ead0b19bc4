import Foundation

/// What imgproxy does to a source URL taken from a path before anything else
/// (`preprocessURL` in its `options/parser/url.go`): each replacement in turn, then the base URL
/// put in front unless the URL already starts with it.
///
/// A replacement's pattern is imgproxy's wildcard pattern (`env.RegexpFromPattern`): matched at
/// the start of the URL, `*` standing for any run of characters but `/`, each `*` a group the
/// replacement can name as `$1` or `${1}` (Go's `Regexp.Expand`).
public struct SourceRewriting: Sendable, Equatable {
    /// One `pattern=replacement` rule of `IMGPROXY_URL_REPLACEMENTS`.
    public struct Replacement: Sendable, Equatable {
        public var pattern: String
        public var replacement: String

        /// Creates a rule.
        public init(pattern: String, replacement: String) {
            self.pattern = pattern
            self.replacement = replacement
        }
    }

    /// The replacements, applied in order.
    public var replacements: [Replacement] = []
    /// Put in front of a URL that does not start with it (`IMGPROXY_BASE_URL`); empty for none.
    public var baseURL = ""

    /// Creates rewriting rules; the defaults change nothing.
    public init(replacements: [Replacement] = [], baseURL: String = "") {
        self.replacements = replacements
        self.baseURL = baseURL
    }

    /// `IMGPROXY_URL_REPLACEMENTS`' form: `pattern=replacement` rules separated by `;`.
    /// - Throws: a rule without `=`.
    public static func replacements(parsing text: String) throws(ProxyError) -> [Replacement] {
        try text.split(separator: ";", omittingEmptySubsequences: false).map { rule throws(ProxyError) in
            guard let equals = rule.firstIndex(of: "=") else { throw .badRequest("a URL replacement is PATTERN=REPLACEMENT, not \(rule)") }
            return Replacement(pattern: String(rule[..<equals]), replacement: String(rule[rule.index(after: equals)...]))
        }
    }

    /// `url` with the rules applied.
    public func apply(_ url: String) -> String {
        var url = url
        for rule in replacements { url = Self.replacing(rule, in: url) }
        return baseURL.isEmpty || url.hasPrefix(baseURL) ? url : baseURL + url
    }

    /// The URL with the pattern's match at its start replaced; unchanged when it does not match.
    /// Each `*` takes the longest run it can with the rest still matching (a greedy `([^/]*)`),
    /// found from a table of where each tail of the pattern can match: linear in the URL for
    /// each `*`, whatever the URL.
    private static func replacing(_ rule: Replacement, in url: String) -> String {
        let literals = rule.pattern.components(separatedBy: "*").map(Array.init)
        let characters = Array(url)
        let count = characters.count
        func literal(_ index: Int, at position: Int) -> Bool {
            let text = literals[index]
            return position + text.count <= count && Array(characters[position..<position + text.count]) == text
        }
        // The end of the run without `/` that starts at each position.
        var runEnd = [Int](repeating: count, count: count + 1)
        for position in stride(from: count - 1, through: 0, by: -1) {
            runEnd[position] = characters[position] == "/" ? position : runEnd[position + 1]
        }
        // tails[i][p]: literals[i...] (with their stars) match from p; latest[i][q]: the last
        // p <= q where they do, or -1.
        var tails = [[Bool]](repeating: [Bool](repeating: false, count: count + 1), count: literals.count)
        var latest = [[Int]](repeating: [Int](repeating: -1, count: count + 1), count: literals.count)
        for index in stride(from: literals.count - 1, through: 0, by: -1) {
            for position in 0...count where literal(index, at: position) {
                if index == literals.count - 1 {
                    tails[index][position] = true
                } else {
                    let start = position + literals[index].count
                    tails[index][position] = latest[index + 1][runEnd[start]] >= start
                }
            }
            var last = -1
            for position in 0...count {
                if tails[index][position] { last = position }
                latest[index][position] = last
            }
        }
        guard tails[0][0] else { return url }
        var groups: [String] = []
        var position = literals[0].count
        for index in 1..<literals.count {
            let end = latest[index][runEnd[position]]
            groups.append(String(characters[position..<end]))
            position = end + literals[index].count
        }
        return expand(rule.replacement, groups: groups) + String(characters[position...])
    }

    /// Go's `Regexp.Expand`: `$n` and `${n}` are group n (0 the whole match is not kept here),
    /// `$$` a dollar; a name that is not a group's number is empty.
    private static func expand(_ template: String, groups: [String]) -> String {
        var output = ""
        var rest = Substring(template)
        while let dollar = rest.firstIndex(of: "$") {
            output += rest[..<dollar]
            rest = rest[rest.index(after: dollar)...]
            if rest.first == "$" {
                output += "$"
                rest = rest.dropFirst()
                continue
            }
            let name: Substring
            if rest.first == "{", let close = rest.firstIndex(of: "}") {
                name = rest[rest.index(after: rest.startIndex)..<close]
                rest = rest[rest.index(after: close)...]
            } else {
                name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                rest = rest.dropFirst(name.count)
            }
            if let number = Int(name), number >= 1, number <= groups.count { output += groups[number - 1] }
        }
        return output + rest
    }
}
