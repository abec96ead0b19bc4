public import Foundation

#if canImport(Glibc)
import NIOConcurrencyHelpers
import Glibc
#endif

/// A program the tests run as a separate process, whose standard output they read line by line
/// as it comes, and which they can kill.
public final class ChildProcess: Sendable {
    /// What the child did.
    public enum Event: Sendable {
        /// It printed a line on stdout.
        case line(String)
        /// It exited, with a status or a signal number.
        case exited(status: Int32, signaled: Bool)
    }

    /// Every line and the exit, in order.
    public let events = EventLog<Event>()
    /// The process id.
    public let processID: Int32
    private let splitter = LineSplitter()

    /// The built product named `name` next to the running test binary (in `.build/<config>/`).
    public static func builtProduct(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Starts `executable` with `arguments`; stderr goes to `standardError` (a file created or
    /// emptied first), else to the test's stderr.
    public init(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil, standardError: URL? = nil) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let standardError {
            _ = FileManager.default.createFile(atPath: standardError.path, contents: nil)
            process.standardError = try FileHandle(forWritingTo: standardError)
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        let events = events
        let splitter = splitter
        // A thread of its own reads the pipe with blocking reads until end of file: Foundation's
        // readability handler on Linux does not reliably report the end.
        let reader = pipe.fileHandleForReading
        let thread = Thread {
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                for line in splitter.feed(data) { events.record(.line(line)) }
            }
            for line in splitter.drain() { events.record(.line(line)) }
            if let exit = splitter.finish(.endOfOutput) { events.record(exit) }
        }
        process.terminationHandler = { process in
            let exit = Event.exited(status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal)
            if let exit = splitter.finish(.terminated(exit)) { events.record(exit) }
        }
        try process.run()
        try? pipe.fileHandleForWriting.close()
        thread.start()
        processID = process.processIdentifier
    }

    /// Waits for the first line that satisfies `predicate` and returns it.
    @discardableResult
    public func waitForLine(timeout: Duration = .seconds(30), where predicate: @escaping @Sendable (String) -> Bool) async throws -> String
    {
        let event = try await events.waitFor(timeout: timeout, "a line from the child") { event in
            if case .line(let line) = event { return predicate(line) }
            return false
        }
        guard case .line(let line) = event else { preconditionFailure("the predicate matched a line") }
        return line
    }

    /// Waits for the child to exit and returns its status (or signal number).
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(60)) async throws -> (status: Int32, signaled: Bool) {
        let event = try await events.waitFor(timeout: timeout, "the child's exit") { event in
            if case .exited = event { return true }
            return false
        }
        guard case .exited(let status, let signaled) = event else { preconditionFailure("the predicate matched an exit") }
        return (status, signaled)
    }

    /// The lines printed so far.
    public var lines: [String] {
        events.events.compactMap { event in
            if case .line(let line) = event { return line }
            return nil
        }
    }

    /// Sends SIGKILL: the child stops wherever it is, as in a crash.
    public func kill() {
        Glibc.kill(processID, SIGKILL)
    }
}

/// Cuts a byte stream into lines, keeping the unfinished tail for the next piece, and holds the
/// exit back until the output has ended, so that every line is recorded before the exit.
private final class LineSplitter: Sendable {
    enum Ending {
        case endOfOutput
        case terminated(ChildProcess.Event)
    }

    private let buffer = NIOLockedValueBox<[UInt8]>([])
    private let endings = NIOLockedValueBox<(outputEnded: Bool, exit: ChildProcess.Event?)>((false, nil))

    /// Returns the exit event once both the output has ended and the process has terminated.
    func finish(_ ending: Ending) -> ChildProcess.Event? {
        endings.withLockedValue { state in
            switch ending {
            case .endOfOutput: state.outputEnded = true
            case .terminated(let exit): state.exit = exit
            }
            return state.outputEnded ? state.exit : nil
        }
    }

    func feed(_ data: Data) -> [String] {
        buffer.withLockedValue { buffer in
            buffer.append(contentsOf: data)
            var lines: [String] = []
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
                buffer.removeSubrange(...newline)
            }
            return lines
        }
    }

    func drain() -> [String] {
        buffer.withLockedValue { buffer in
            defer { buffer = [] }
            return buffer.isEmpty ? [] : [String(decoding: buffer, as: UTF8.self)]
        }
    }
}
