import ArgumentParser
import Foundation
import WebImage
import WebImageDataset

/// img2dataset's options on `prefetch`, under its names (with dashes) and defaults: the list's
/// format and columns, the resizer, hashes, and the opt-out headers.
struct DatasetOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The list's format: \(ListFormat.names).", valueName: "FORMAT"))
    var inputFormat: String = "txt"

    @Option(help: ArgumentHelp("The column holding the URL (csv, tsv, jsonl, json).", valueName: "NAME"))
    var urlCol: String = "url"

    @Option(help: ArgumentHelp("The column holding the caption, written as KEY.txt.", valueName: "NAME"))
    var captionCol: String?

    @Option(help: ArgumentHelp("Columns carried into each sample's JSON, comma-separated.", valueName: "A,B"))
    var saveAdditionalColumns: String?

    @Option(help: ArgumentHelp("Dataset modes: the side resize modes aim at (default 256).", valueName: "N"))
    var imageSize: Int = 256

    @Option(help: ArgumentHelp("Dataset modes: \(DatasetResizeMode.names) (default border).", valueName: "MODE"))
    var resizeMode: String = DatasetResizeMode.border.rawValue

    @Flag(help: "Dataset modes: only make images smaller, never larger.")
    var resizeOnlyIfBigger = false

    @Option(help: ArgumentHelp("Dataset modes: jpg, png, webp, avif or jxl (default jpg).", valueName: "FORMAT"))
    var encodeFormat: String = "jpg"

    @Option(help: ArgumentHelp("Dataset modes: quality 0-100 (png: 0-9, accepted for img2dataset's sake). Default 95.", valueName: "N"))
    var encodeQuality: Int = 95

    @Flag(help: "Dataset modes: keep the downloaded bytes when they are in the encode format and need no resize.")
    var skipReencode = false

    @Flag(help: "Dataset modes: write the downloaded bytes as they came: no decode, resize or filter.")
    var disableAllReencoding = false

    @Option(help: ArgumentHelp("Dataset modes: refuse images whose shorter side is under N pixels.", valueName: "N"))
    var minImageSize: Int = 0

    @Option(help: ArgumentHelp("Dataset modes: refuse images of more pixels than this.", valueName: "N"))
    var maxImageArea: Double = .infinity

    @Option(help: ArgumentHelp("Dataset modes: refuse images whose longer side over the shorter is more than this.", valueName: "R"))
    var maxAspectRatio: Double = .infinity

    @Flag(help: "Dataset modes: keep every frame of an animation (with --encode-format webp); otherwise the first, as img2dataset.")
    var keepAnimation = false

    @Flag(
        inversion: .prefixedNo, help: "Dataset modes: each record's exif field, the image's EXIF tags as img2dataset's exifread names them."
    )
    var extractExif = true

    @Option(
        help: ArgumentHelp(
            "Dataset modes: hash of the downloaded bytes kept in each record: sha256, md5, sha512 or none.", valueName: "HASH"))
    var computeHash: String = "sha256"

    @Option(
        help: ArgumentHelp(
            "Dataset modes: check the downloaded bytes against the hash in this column (TYPE md5, sha256 or sha512; default the --compute-hash type).",
            valueName: "COLUMN[,TYPE]"))
    var verifyHash: String?

    @Flag(help: "Dataset modes: a download whose bytes equal an earlier one of the run is recorded as a duplicate, not written again.")
    var dedup = false

    @Option(
        help: ArgumentHelp(
            "Dataset modes: the column of boxes to blur, [[x_min, y_min, x_max, y_max], ...] in shares of the image's size (DataComp's face_bboxes); saved in each record too.",
            valueName: "COLUMN"))
    var bboxCol: String?

    @Option(
        help: ArgumentHelp(
            "X-Robots-Tag directives that refuse an image, comma-separated; empty for none (default noai,noimageai,noindex,noimageindex).",
            valueName: "A,B"))
    var disallowedHeaderDirectives: String = "noai,noimageai,noindex,noimageindex"

    @Option(
        help: ArgumentHelp(
            "Added to the User-Agent as (compatible; TOKEN), and matched by X-Robots-Tag's user-agent form.", valueName: "TOKEN"))
    var userAgentToken: String?

    @Flag(
        help:
            "Read each host's robots.txt once (RFC 9309, for the --user-agent-token or swift-web-image) and skip what it disallows; its Crawl-delay spaces that host's downloads."
    )
    var respectRobotsTxt = false

    @Option(help: ArgumentHelp("Retries of a transient failure (default 2, with back-off).", valueName: "N"))
    var retries: Int?

    @Option(help: ArgumentHelp("Seconds to wait for a response to start or go on (default 15).", valueName: "SECONDS"))
    var timeout: Double?

    /// Checks every value, for the command's `validate()`; `lists` are the lists' paths (a Parquet
    /// file is one whatever `--input-format` says).
    func check(lists: [String]) throws {
        guard ListFormat(name: inputFormat) != nil else {
            throw ValidationError("--input-format takes \(ListFormat.names), not \"\(inputFormat)\"")
        }
        _ = try resizer()
        _ = try hashes()
        if let retries, retries < 0 { throw ValidationError("--retries takes 0 or more, not \(retries)") }
        if let timeout { _ = try flagDuration(timeout, "--timeout") }
        if ListFormat(name: inputFormat) == .txt, captionCol != nil || verifyHash != nil || !additionalColumns.isEmpty,
            !lists.allSatisfy(SampleListReader.isParquet(path:))
        {
            throw ValidationError(
                "a txt list has only URLs: --caption-col, --verify-hash and --save-additional-columns need csv, tsv, jsonl, json or parquet"
            )
        }
    }

    var listFormat: ListFormat { ListFormat(name: inputFormat) ?? .txt }

    /// The columns saved in each record: `--save-additional-columns`, and the boxes' column, which
    /// img2dataset adds to them (its `main.py`).
    var additionalColumns: [String] {
        let named =
            saveAdditionalColumns.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
            ?? []
        guard let bboxCol, !named.contains(bboxCol) else { return named }
        return named + [bboxCol]
    }

    /// The columns the list reader takes.
    func columns() throws -> ListColumns {
        ListColumns(url: urlCol, caption: captionCol, hash: try hashes().verify?.column, additional: additionalColumns)
    }

    /// The encode formats img2dataset takes (jpg, png, webp) and the two more this project writes.
    static let encodeFormats: [String: ImageFormat] = ["jpg": .jpeg, "png": .png, "webp": .webP, "avif": .avif, "jxl": .jpegXL]

    /// The resizer the options describe.
    func resizer() throws -> DatasetResizer {
        guard let mode = DatasetResizeMode(rawValue: resizeMode) else {
            throw ValidationError("--resize-mode takes \(DatasetResizeMode.names), not \"\(resizeMode)\"")
        }
        guard let format = Self.encodeFormats[encodeFormat.lowercased()] else {
            throw ValidationError("--encode-format takes jpg, png, webp, avif or jxl, not \"\(encodeFormat)\"")
        }
        guard imageSize >= 1, imageSize <= 20_000 else { throw ValidationError("--image-size takes 1 to 20000, not \(imageSize)") }
        let qualities = format == .png ? 0...9 : 0...100
        guard qualities.contains(encodeQuality) else {
            throw ValidationError(
                "--encode-quality takes \(qualities.lowerBound) to \(qualities.upperBound) for \(encodeFormat), not \(encodeQuality)")
        }
        guard minImageSize >= 0, maxImageArea > 0, maxAspectRatio > 0 else {
            throw ValidationError("--min-image-size, --max-image-area and --max-aspect-ratio take positive numbers")
        }
        return DatasetResizer(
            imageSize: imageSize, mode: mode, onlyIfBigger: resizeOnlyIfBigger, skipReencode: skipReencode,
            disableAllReencoding: disableAllReencoding, minimumImageSize: minImageSize, maximumImageArea: maxImageArea,
            maximumAspectRatio: maxAspectRatio, encodeFormat: format, encodeQuality: encodeQuality, keepsAnimation: keepAnimation)
    }

    /// The hash each record keeps (nil for none) and the column checked, with its hash.
    func hashes() throws -> (compute: DigestKind?, verify: (column: String, kind: DigestKind)?) {
        let compute: DigestKind?
        if computeHash.lowercased() == "none" {
            compute = nil
        } else if let kind = DigestKind(rawValue: computeHash.lowercased()) {
            compute = kind
        } else {
            throw ValidationError("--compute-hash takes sha256, md5, sha512 or none, not \"\(computeHash)\"")
        }
        guard let verifyHash else { return (compute, nil) }
        let parts = verifyHash.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(parts.count), !parts[0].isEmpty else {
            throw ValidationError("--verify-hash takes COLUMN or COLUMN,TYPE, not \"\(verifyHash)\"")
        }
        guard let kind = parts.count == 2 ? DigestKind(rawValue: parts[1].lowercased()) : compute ?? .sha256 else {
            throw ValidationError("--verify-hash: the type is md5, sha256 or sha512, not \"\(parts[1])\"")
        }
        return (compute, (parts[0], kind))
    }

    /// The directives that refuse an image, lower-cased; empty when the list is.
    var disallowedDirectives: Set<String> {
        Set(
            disallowedHeaderDirectives.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter {
                !$0.isEmpty
            })
    }

    /// The product token robots.txt groups are matched against: the user agent token, else ours.
    var robotsAgent: String { normalizedToken ?? "swift-web-image" }

    /// The user agent token as X-Robots-Tag's user-agent form compares it: trimmed, lower-cased.
    var normalizedToken: String? {
        userAgentToken.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.flatMap { $0.isEmpty ? nil : $0 }
    }
}
