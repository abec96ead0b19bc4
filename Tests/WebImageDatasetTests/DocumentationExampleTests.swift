import Foundation
import Testing
import WebImageDataset
import WebImageTestSupport

/// The WebImageDataset catalog's example, as written there, run on a list.
@Suite("WebImageDataset's documented example")
struct DocumentationExampleTests {
    /// The rows of a caption list that a crawl would load: web URLs its robots.txt rules allow.
    func loadableRows(of path: String, robots: RobotsRules) throws -> [ListRow] {
        let reader = try SampleListReader(path: path, format: .csv, columns: ListColumns(caption: "caption"))
        let schemes = RowSchemes()  // http and https only
        var rows: [ListRow] = []
        while let row = try reader.next() {
            guard row.malformed == nil, let url = URL(string: row.url), schemes.refusal(for: url) == nil else { continue }
            if robots.allows(url.path) { rows.append(row) }
        }
        return rows
    }

    @Test("web rows the rules allow, nothing else")
    func example() throws {
        let directory = try TemporaryDirectory("dataset-example")
        let path = directory.path + "/list.csv"
        try """
        url,caption
        http://a.test/public/1.jpg,kept
        http://a.test/private/2.jpg,disallowed
        file:///etc/hostname,a local file
        https://a.test/public/3.jpg,"kept, too"
        http://a.test/public/4.jpg,extra,field
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let rules = RobotsRules.parse("User-agent: *\nDisallow: /private/\n", agent: "example")
        let rows = try loadableRows(of: path, robots: rules)
        #expect(rows.map(\.caption) == ["kept", "kept, too"])
    }
}
