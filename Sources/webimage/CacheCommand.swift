import ArgumentParser
import Foundation
import WebImage

/// `webimage cache`: look into and tidy the disk cache.
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and tidy the disk cache.",
        discussion: """
            Examples:
              webimage cache stats --json
              webimage cache ls
              webimage cache rm https://example.com/a.jpg
              webimage cache trim
              webimage cache clear --cache-dir /tmp/images
            """,
        subcommands: [Stats.self, List.self, Remove.self, Clear.self, Trim.self, Path.self]
    )

    /// Options all cache subcommands take.
    struct Common: ParsableArguments {
        @OptionGroup var cache: CacheOptions
        @OptionGroup var output: OutputOptions

        /// Sets up logging, opens the disk cache, runs `body` with it and closes it, so that the
        /// journal is written whether `body` succeeds or throws.
        func withDiskCache(_ body: (DiskCache) throws -> Void) throws {
            output.bootstrapLogging()
            let disk = try cache.openDiskCache()
            defer { disk.close() }
            try body(disk)
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Entry count, bytes, directory and limits.",
            discussion:
                "JSON fields: count, bytes (what the size limit counts: files, and segment files of small entries with their waste), packedCount (entries packed into segment files), directory, sizeLimit, countLimit, maximumAgeSeconds (null when entries never expire). Example: webimage cache stats --json"
        )
        @OptionGroup var common: Common

        struct Report: Encodable {
            let count: Int
            let bytes: Int
            let packedCount: Int
            let directory: String
            let sizeLimit: Int
            let countLimit: Int
            let maximumAgeSeconds: Double?
        }

        func run() async throws {
            try common.withDiskCache { disk in
                let limits = disk.configuration
                let report = Report(
                    count: disk.count, bytes: disk.diskUsage, packedCount: disk.entries().count(where: \.isPacked),
                    directory: disk.directory.path, sizeLimit: limits.sizeLimit,
                    countLimit: limits.countLimit, maximumAgeSeconds: limits.maximumAge.map { $0.milliseconds / 1000 })
                if common.output.json {
                    print(jsonLine(report))
                } else {
                    print("directory:   \(report.directory)")
                    print(
                        "entries:     \(report.count) (limit \(report.countLimit == 0 ? "none" : String(report.countLimit))), \(report.packedCount) packed"
                    )
                    print("bytes:       \(report.bytes) (limit \(report.sizeLimit == 0 ? "none" : String(report.sizeLimit)))")
                    print("maximum age: \(report.maximumAgeSeconds.map { String(format: "%.0f s", $0) } ?? "none")")
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls",
            abstract: "List the entries, most recently used first.",
            discussion:
                "JSON: an array of objects with key, bytes, created, lastAccess (ISO 8601) and contentType. Example: webimage cache ls --json"
        )
        @OptionGroup var common: Common

        struct Entry: Encodable {
            let key: String?
            let bytes: Int
            let created: Date
            let lastAccess: Date
            let contentType: String?
        }

        func run() async throws {
            try common.withDiskCache { disk in
                let entries = disk.entries().sorted { $0.lastAccess > $1.lastAccess }.map {
                    Entry(key: $0.key, bytes: $0.size, created: $0.created, lastAccess: $0.lastAccess, contentType: $0.metadata.contentType)
                }
                if common.output.json {
                    print(jsonLine(entries))
                    return
                }
                let formatter = ISO8601DateFormatter()
                for entry in entries {
                    print(
                        String(entry.bytes).padded(10) + formatter.string(from: entry.lastAccess).padded(22)
                            + (entry.key ?? "(key not recorded)"))
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Remove one entry by its key (for a plain load, the URL).",
            discussion: "Exits 1 when the cache has no such entry. Example: webimage cache rm https://example.com/a.jpg"
        )
        @Argument(help: "The entry's key.") var key: String
        @OptionGroup var common: Common

        func run() async throws {
            try common.withDiskCache { disk in
                guard disk.contains(key) else { throw CommandFailure("no entry with key \(key)") }
                try disk.remove(key)
                try disk.flush()
                if common.output.json { print(jsonLine(["removed": key])) } else { print("removed \(key)") }
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every entry.", discussion: "Example: webimage cache clear")
        @OptionGroup var common: Common

        func run() async throws {
            try common.withDiskCache { disk in
                let count = disk.count
                try disk.removeAll()
                try disk.flush()
                if common.output.json { print(jsonLine(["removed": count])) } else { print("removed \(count) entries") }
            }
        }
    }

    struct Trim: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove expired entries and keep within the limits.", discussion: "Example: webimage cache trim")
        @OptionGroup var common: Common

        func run() async throws {
            try common.withDiskCache { disk in
                let before = disk.count
                try disk.removeExpired()
                try disk.flush()
                let removed = before - disk.count
                if common.output.json {
                    print(jsonLine(["removed": removed, "count": disk.count]))
                } else {
                    print("removed \(removed) entries, \(disk.count) left")
                }
            }
        }
    }

    struct Path: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the cache directory.", discussion: "Example: webimage cache path")
        @OptionGroup var common: Common

        func run() async throws {
            let path = common.cache.directory.path
            if common.output.json { print(jsonLine(["directory": path])) } else { print(path) }
        }
    }
}
