package import Foundation
package import WebImage
import WebImageCore

/// One row of a dataset run, as img2dataset's `Downloader.download_shard` handles a sample:
/// download (refused by `X-Robots-Tag` when it says so), verify the hash, resize and encode,
/// and a record with img2dataset's fields in its order, failures included.
package struct DatasetJob: Sendable {
    package let manager: ImageManager
    package let context: LoadContext
    package let resizer: DatasetResizer
    package let limits: DecodeLimits
    package let columns: ListColumns
    package let computeHash: DigestKind?
    package let verifyHash: DigestKind?
    package let digests: DownloadDigests?
    /// The schemes and buckets rows may use, judged before anything is read.
    package let schemes: RowSchemes
    package let robots: RobotsPolicy?
    /// The `X-Robots-Tag` directives that refuse an image, judged on every download and cached copy.
    package let robotsTag: RobotsTag
    /// Whether records carry img2dataset's `exif` field.
    package let extractsExif: Bool
    /// The column of boxes to blur (`--bbox-col`), if any.
    package var boxesColumn: String?

    /// A row's work with what a run shares.
    package init(
        manager: ImageManager, context: LoadContext, resizer: DatasetResizer, limits: DecodeLimits, columns: ListColumns,
        computeHash: DigestKind?, verifyHash: DigestKind?, digests: DownloadDigests?, schemes: RowSchemes, robots: RobotsPolicy?,
        robotsTag: RobotsTag, extractsExif: Bool, boxesColumn: String?
    ) {
        (self.manager, self.context, self.resizer, self.limits, self.columns) = (manager, context, resizer, limits, columns)
        (self.computeHash, self.verifyHash, self.digests, self.schemes) = (computeHash, verifyHash, digests, schemes)
        (self.robots, self.robotsTag, self.extractsExif, self.boxesColumn) = (robots, robotsTag, extractsExif, boxesColumn)
    }

    /// The sample of `row`, the `position`-th row of the run, under `key`. It never throws: every
    /// way a row can fail is its record's `status` and `error_message`.
    package func sample(_ row: ListRow, key: String, position: Int) async -> DatasetWriter.Sample {
        var sample = DatasetWriter.Sample(position: position, status: .failedToDownload, record: .null)
        if columns.caption != nil { sample.caption = row.caption ?? "" }
        var result = Result()
        do {
            if let malformed = row.malformed { throw Failure(.failedToDownload, malformed) }
            let data = try await download(row.url)
            var hashes = DownloadHashes(data)
            if let verifyHash {
                guard hashes.hex(verifyHash) == row.expectedHash?.lowercased() else { throw Failure(.failedToDownload, "hash mismatch") }
            }
            if let digests, let earlier = digests.firstKey(for: &hashes, key: key) {
                throw Failure(.duplicate, "duplicate of \(earlier)")
            }
            let output = try await resize(data, boxes: try boxes(of: row))
            result = Result(
                width: output.width, height: output.height, originalWidth: output.originalWidth, originalHeight: output.originalHeight,
                exif: extractsExif ? ExifDump.json(of: data) : nil, hash: computeHash.map { hashes.hex($0) })
            sample.status = .success
            sample.image = output.bytes
            sample.fileExtension = Self.fileExtension(output.bytes, resizer: resizer)
        } catch let failure as Failure {
            sample.status = failure.status
            sample.error = Self.bounded(failure.message)
        } catch {
            sample.error = Self.message(for: error)
        }
        sample.record = record(row, key: key, status: sample.status, error: sample.error, result: result)
        return sample
    }

    /// What a success adds to its record.
    private struct Result {
        var width: Int?
        var height: Int?
        var originalWidth: Int?
        var originalHeight: Int?
        var exif: String?
        var hash: String?
    }

    private struct Failure: Error {
        let status: DatasetWriter.Status
        let message: String
        init(_ status: DatasetWriter.Status, _ message: String) {
            self.status = status
            self.message = message
        }
    }

    /// The downloaded bytes, through the manager (so the disk cache, coalescing and the address
    /// guard apply), undecoded.
    private func download(_ text: String) async throws -> Data {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw Failure(.failedToDownload, text.isEmpty ? "no URL" : "not a URL: \(text)")
        }
        if let refusal = schemes.refusal(for: url) { throw Failure(.failedToDownload, refusal) }
        guard url.host != nil || scheme == "data" || scheme == "file" else { throw Failure(.failedToDownload, "not a URL: \(text)") }
        if let robots, let refusal = await robots.refusal(for: url) { throw Failure(.failedToDownload, refusal) }
        let loaded = try await manager.image(for: url, options: [.waitStoreCache, .avoidDecodeImage], context: context)
        if robotsTag.refuses(loaded.metadata) { throw Failure(.failedToDownload, RobotsTag.refusal) }
        guard let data = loaded.data else { throw Failure(.failedToDownload, "no bytes") }
        return data
    }

    /// The boxes `row` asks to blur: none without `--bbox-col` or for a null value; a value that
    /// is not a list of boxes fails the row (img2dataset's resizer fails it too).
    private func boxes(of row: ListRow) throws -> BoundingBoxBlur? {
        guard let boxesColumn, let value = row.columns.first(where: { $0.name == boxesColumn })?.value else { return nil }
        do {
            return try BoundingBoxBlur.boxes(in: value).map(BoundingBoxBlur.init(boxes:))
        } catch {
            throw Failure(.failedToResize, "\(boxesColumn): \(error.description)")
        }
    }

    /// Resizes and encodes in the decode pool, a failure there being a resize failure.
    private func resize(_ data: Data, boxes: BoundingBoxBlur?) async throws -> DatasetResizer.Output {
        let resizer = resizer
        let limits = limits
        let outcome = try await WorkPool.shared.run { () throws(WebImageError) in
            Swift.Result { try resizer.process(data, limits: limits, blur: boxes) }
        }
        do {
            return try outcome.get()
        } catch {
            throw Failure(.failedToResize, Self.message(for: error))
        }
    }

    /// img2dataset's meta: the saved columns, `caption`, `url`, then its fields, in its order
    /// (`exif` as a JSON text inside the record, as img2dataset stores it).
    private func record(_ row: ListRow, key: String, status: DatasetWriter.Status, error: String?, result: Result) -> JSONValue {
        func integer(_ value: Int?) -> JSONValue { value.map { .integer(Int64($0)) } ?? .null }
        var members = row.columns
        if columns.caption != nil { members.append(.init(name: "caption", value: row.caption.map(JSONValue.string) ?? .null)) }
        members += [
            .init(name: "url", value: .string(row.url)),
            .init(name: "key", value: .string(key)),
            .init(name: "status", value: .string(status.rawValue)),
            .init(name: "error_message", value: error.map(JSONValue.string) ?? .null),
            .init(name: "width", value: integer(result.width)),
            .init(name: "height", value: integer(result.height)),
            .init(name: "original_width", value: integer(result.originalWidth)),
            .init(name: "original_height", value: integer(result.originalHeight)),
        ]
        if extractsExif { members.append(.init(name: "exif", value: result.exif.map(JSONValue.string) ?? .null)) }
        if let computeHash { members.append(.init(name: computeHash.rawValue, value: result.hash.map(JSONValue.string) ?? .null)) }
        return .object(members)
    }

    /// A failure's text for the record and the stats: the error's own description, cut to
    /// ``maximumMessageBytes``.
    package static func message(for error: any Error) -> String {
        bounded((error as? WebImageError)?.description ?? "\(error)")
    }

    /// The most bytes of an error's text a record or a `status_dict` key holds: a row's text
    /// (a URL) can be as long as a record, and its error is written twice per row.
    package static let maximumMessageBytes = 1024

    /// `text` cut to ``maximumMessageBytes`` (at a character's end), with `…` when cut.
    package static func bounded(_ text: String) -> String {
        guard text.utf8.count > maximumMessageBytes else { return text }
        var cut = Substring(text)
        while cut.utf8.count > maximumMessageBytes - 3 { cut = cut.dropLast(max(1, (cut.utf8.count - maximumMessageBytes) / 4)) }
        return cut + "…"
    }

    /// The extension of a written image: the encode format's (img2dataset's names: `jpg`), or
    /// with `--disable-all-reencoding` the format the bytes are in.
    package static func fileExtension(_ bytes: Data, resizer: DatasetResizer) -> String {
        let format =
            resizer.disableAllReencoding ? ImageFormat(sniffing: [UInt8](bytes.prefix(64))) ?? resizer.encodeFormat : resizer.encodeFormat
        return format.preferredFileExtension
    }
}
