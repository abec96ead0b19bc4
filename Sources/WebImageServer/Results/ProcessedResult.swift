import Foundation
import WebImage

/// A processed result (or an `/info` answer), as the result store keeps it and the response
/// stage answers it.
struct ProcessedResult: Sendable {
    var data: Data
    var contentType: String
    /// The source's `ETag` (imgproxy v4 answers a result with its source's), none when the
    /// source has none.
    var etag: String?
    var lastModified: String?
    var fetchSeconds: Double?
    var processSeconds: Double?
    /// `IMGPROXY_ENABLE_DEBUG_HEADERS`' facts, kept with the result when the setting is on.
    var debug: DebugFacts?
    /// Where this answer came from.
    var tier: CacheTier = .processed

    /// `text` when it is an HTTP date, else nil: what a result keeps of its source's
    /// `Last-Modified` (imgproxy passes no other on).
    static func validDate(_ text: String?) -> String? {
        text.flatMap { HTTPDate.parse($0) == nil ? nil : $0 }
    }

    /// The result as a tier keeps it: without the timings of the request that made it.
    var stored: ProcessedResult {
        ProcessedResult(data: data, contentType: contentType, etag: etag, lastModified: lastModified, debug: debug)
    }

    /// The `Server-Timing` of a result made for this request: its fetch and processing times.
    var serverTiming: String {
        var timing: [String] = []
        if let fetchSeconds { timing.append("fetch;dur=\(Self.milliseconds(fetchSeconds))") }
        if let processSeconds { timing.append("process;dur=\(Self.milliseconds(processSeconds))") }
        return timing.joined(separator: ", ")
    }

    private static func milliseconds(_ seconds: Double) -> String {
        String(format: "%.1f", seconds * 1000)
    }
}

/// The source's byte count and size and the result's size, answered as imgproxy's debug
/// headers (`handlers/processing/request_methods.go`, `writeDebugHeaders`), and stored with
/// the result as five numbers so that a cached answer has them too.
struct DebugFacts: Sendable, Equatable {
    var originBytes: Int
    var originWidth: Int
    var originHeight: Int
    var resultWidth: Int
    var resultHeight: Int

    /// From the source's and the result's bytes (their headers only); nil when either does not parse.
    init?(source: Data, result: Data) {
        guard let origin = try? ImageHeader(data: source), let made = try? ImageHeader(data: result) else { return nil }
        (originBytes, originWidth, originHeight) = (source.count, origin.width, origin.height)
        (resultWidth, resultHeight) = (made.width, made.height)
    }

    /// As stored in the result's metadata.
    init?(stored: Data?) {
        let numbers = stored.map { String(decoding: $0, as: UTF8.self).split(separator: " ").compactMap { Int($0) } } ?? []
        guard numbers.count == 5 else { return nil }
        (originBytes, originWidth, originHeight, resultWidth, resultHeight) = (
            numbers[0], numbers[1], numbers[2], numbers[3], numbers[4]
        )
    }

    var stored: Data { Data("\(originBytes) \(originWidth) \(originHeight) \(resultWidth) \(resultHeight)".utf8) }

    var headers: [(name: String, value: String)] {
        [
            ("X-Origin-Width", String(originWidth)), ("X-Origin-Height", String(originHeight)), ("X-Result-Width", String(resultWidth)),
            ("X-Result-Height", String(resultHeight)), ("X-Origin-Content-Length", String(originBytes)),
        ]
    }
}
