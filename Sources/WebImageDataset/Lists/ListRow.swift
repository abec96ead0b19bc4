import Foundation

/// One entry of a list: the URL and what goes with it into its sample.
public struct ListRow: Equatable, Sendable {
    /// The image's URL as written in the list (empty when its column is empty or missing).
    public var url: String
    /// The caption, when the list has a caption column (`--caption-col`).
    public var caption: String?
    /// The hash to check the downloaded bytes against (`--verify-hash COLUMN`).
    public var expectedHash: String?
    /// The columns `--save-additional-columns` keeps, in the order it names them.
    public var columns: [JSONValue.Member] = []
    /// Why the row cannot be read (a CSV row with the wrong number of fields, a record past
    /// ``SampleListReader/maximumRecordBytes``); it is then recorded as a failure, never dropped.
    public var malformed: String?

    /// A row of `url` and what goes with it.
    public init(
        url: String, caption: String? = nil, expectedHash: String? = nil, columns: [JSONValue.Member] = [], malformed: String? = nil
    ) {
        self.url = url
        self.caption = caption
        self.expectedHash = expectedHash
        self.columns = columns
        self.malformed = malformed
    }

    /// The most of a URL a message or a cut row shows, in bytes.
    public static let maximumShownURLBytes = 2048
}

/// The list formats `--input-format` takes, as img2dataset names them (a `.gz` suffix is
/// accepted too; gzip is found by its bytes either way).
public enum ListFormat: String, CaseIterable, Sendable {
    case txt, csv, tsv, jsonl, json, parquet

    /// The format a name gives (`csv`, `CSV`, `csv.gz`); nil for another.
    public init?(name: String) {
        let trimmed = name.hasSuffix(".gz") ? String(name.dropLast(3)) : name
        self.init(rawValue: trimmed.lowercased())
    }

    /// The formats, as a usage text lists them.
    public static let names = "txt, csv, tsv, jsonl or json (gzip-compressed too), or parquet (a file or a folder of them)"
}

/// Which columns of a list a run reads (img2dataset's `--url_col`, `--caption_col`,
/// `--save_additional_columns`, `--verify_hash`).
public struct ListColumns: Equatable, Sendable {
    /// The URL's column. Default `url`.
    public var url: String
    /// The caption's column, if any.
    public var caption: String?
    /// The column of the hash to verify, if any.
    public var hash: String?
    /// The columns copied into each row's ``ListRow/columns``.
    public var additional: [String]

    /// Columns as named; the defaults read the `url` column alone.
    public init(url: String = "url", caption: String? = nil, hash: String? = nil, additional: [String] = []) {
        self.url = url
        self.caption = caption
        self.hash = hash
        self.additional = additional
    }
}
