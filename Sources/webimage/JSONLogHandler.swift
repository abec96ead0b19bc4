import Foundation
import Logging

/// `--log-format json`: one JSON object per line on standard error, for log collectors that parse
/// lines (imgproxy's `IMGPROXY_LOG_FORMAT=json`): `time` (ISO 8601, UTC, milliseconds), `level`,
/// `logger` (the label), `msg`, and each metadata field at the top level, so a request's
/// `hb.request.id` and the access line's `status`, `path` and `ms` are fields of their own.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    /// Where the lines go; standard error unless a test gives another.
    private let write: @Sendable (String) -> Void

    init(label: String, write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }) {
        self.label = label
        self.write = write
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { _, new in new } }
        if let given = event.metadata { fields.merge(given) { _, new in new } }
        var object: [String: Any] = [:]
        for (key, value) in fields { object[key] = Self.json(value) }
        object["time"] = Self.timestamp(Date())
        object["level"] = event.level.rawValue
        object["logger"] = label
        object["msg"] = "\(event.message)"
        // Sorted keys: the same event is the same line, and a reader finds the fields in one order.
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return
        }
        write(String(decoding: data, as: UTF8.self) + "\n")
    }

    private static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(json)
        case .dictionary(let fields): fields.mapValues(json)
        }
    }

    private static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}

/// Where the command's log lines go: standard error, as text or JSON lines, at a level; in a
/// traced run each line of a traced request also carries its `trace_id` and `span_id`.
struct LogOutput {
    var level: Logger.Level
    var json = false
    var traced = false

    /// Bootstraps the process-wide logging system (once per process).
    func bootstrap() {
        let level = level
        let json = json
        let factory: @Sendable (String, Logger.MetadataProvider?) -> any LogHandler = { label, provider in
            if json {
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                handler.metadataProvider = provider
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label, metadataProvider: provider)
            handler.logLevel = level
            return handler
        }
        if traced, let provider = TraceExport.logMetadata {
            LoggingSystem.bootstrap(factory, metadataProvider: provider)
        } else {
            LoggingSystem.bootstrap { label in factory(label, nil) }
        }
    }
}
