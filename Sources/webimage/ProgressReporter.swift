import Foundation
import WebImage

/// The counts of a prefetch, updated by its workers and read by the progress display.
final class PrefetchCounts: Sendable {
    struct Snapshot: Sendable {
        var succeeded = 0
        var failed = 0
        var skipped = 0
        var bytes: Int64 = 0
        var done: Int { succeeded + failed + skipped }
    }

    private let state = Locked(Snapshot())

    func update(_ body: (inout Snapshot) -> Void) {
        state.withLock { body(&$0) }
    }

    var snapshot: Snapshot {
        state.withLock { $0 }
    }
}

/// Shows a prefetch's progress on stderr: on a terminal, a bar redrawn in place ten times a
/// second; otherwise a plain line every `interval`, which logs and CI keep readable.
struct ProgressReporter: Sendable {
    let total: Int
    let counts: PrefetchCounts
    let isTerminal: Bool
    let interval: Duration
    let start = ContinuousClock.now

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Redraws until the task is cancelled.
    func run() async {
        let period = isTerminal ? Duration.milliseconds(100) : interval
        while !Task.isCancelled {
            do { try await Task.sleep(for: period) } catch { break }
            write(isTerminal ? bar() : plainLine())
        }
    }

    /// Clears the bar before other stderr output or the summary.
    func clear() {
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
    }

    /// Prints a message above the bar.
    func message(_ text: String) {
        clear()
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    func bar(width: Int = 24) -> String {
        let snapshot = counts.snapshot
        let filled = total == 0 ? width : width * snapshot.done / total
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        return "\r\u{1B}[2K[\(bar)] " + figures(snapshot)
    }

    func plainLine() -> String {
        "progress: " + figures(counts.snapshot) + "\n"
    }

    private func figures(_ snapshot: PrefetchCounts.Snapshot) -> String {
        let seconds = max((ContinuousClock.now - start).milliseconds / 1000, 0.001)
        let rate = Double(snapshot.done) / seconds
        let remaining = rate > 0 ? Double(total - snapshot.done) / rate : 0
        return "\(snapshot.done)/\(total)  \(String(format: "%.1f", rate)) img/s  \(Self.megabytes(snapshot.bytes))  "
            + "\(snapshot.failed) failed  ETA \(Self.clock(remaining))"
    }

    static func megabytes(_ bytes: Int64) -> String {
        String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }

    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        return whole >= 60 ? "\(whole / 60)m\(String(format: "%02d", whole % 60))s" : "\(whole)s"
    }
}
