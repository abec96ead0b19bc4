package import Logging
package import WebImageTesting

/// Log entries recorded in an event log, so a test can wait for one.
package struct EventLogHandler: LogHandler {
    package let entries: EventLog<String>

    package init(entries: EventLog<String>) {
        self.entries = entries
    }

    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .trace

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        entries.record("\(event.level) \(event.message)")
    }
}
