public import Foundation

#if canImport(Glibc)
import Glibc
import NIOConcurrencyHelpers
#endif

/// A program the tests run as a separate process, whose standard output they read line by line
/// as it comes, and which they can kill.
///
/// Started with `posix_spawn` and reaped with `waitpid` on a thread of its own, not with
/// Foundation's `Process`, which on Linux leaks with every child: LeakSanitizer finds the weak
/// reference table of each `Process` left behind (reproduced alone with `/bin/true`), and in this
/// suite each child's `Process`, `Pipe` and file handles with what their handlers captured. A test
/// kit that others test with must not leak (issue 23).
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

    /// The built product named `name` next to the running test binary (in `.build/<config>/`).
    public static func builtProduct(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Starts `executable` with `arguments`; stderr goes to `standardError` (a file created or
    /// emptied first), else to the test's stderr; the environment is this process's unless given.
    public init(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil, standardError: URL? = nil) throws {
        // Glibc's module does not export pipe2; the lock keeps another ChildProcess from spawning
        // between pipe and fcntl, which would hand it our write end and hold our pipe open.
        let (processID, output) = try Self.spawnLock.withLock {
            try Self.start(executable, arguments, environment: environment, standardError: standardError)
        }
        self.processID = processID
        let watcher = Watcher(processID: processID, output: output, events: events)
        // A thread of its own reads the pipe to its end, then reaps the child: every line is
        // recorded before the exit.
        var thread = pthread_t()
        let context = Unmanaged.passRetained(watcher).toOpaque()
        guard
            pthread_create(
                &thread, nil,
                { context in
                    Unmanaged<Watcher>.fromOpaque(context!).takeRetainedValue().run()
                    return nil
                }, context) == 0
        else {
            Unmanaged<Watcher>.fromOpaque(context).release()
            Glibc.kill(processID, SIGKILL)
            throw ChildProcessError(call: "pthread_create", errno: errno)
        }
        pthread_detach(thread)
    }

    private static let spawnLock = NIOLock()

    /// Starts the child with its stdout on a new pipe; returns its id and the pipe's read end.
    private static func start(_ executable: URL, _ arguments: [String], environment: [String: String]?, standardError: URL?)
        throws(ChildProcessError) -> (processID: Int32, output: Int32)
    {
        var output: [Int32] = [0, 0]
        guard pipe(&output) == 0 else { throw ChildProcessError(call: "pipe", errno: errno) }
        _ = fcntl(output[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(output[1], F_SETFD, FD_CLOEXEC)
        var errorFile: Int32 = -1
        if let standardError {
            errorFile = open(standardError.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard errorFile >= 0 else {
                let error = errno
                close(output[0])
                close(output[1])
                throw ChildProcessError(call: "open \(standardError.path)", errno: error)
            }
        }
        defer {
            close(output[1])
            if errorFile >= 0 { close(errorFile) }
        }
        do {
            let processID = try spawn(
                executable.path, arguments: [executable.path] + arguments,
                environment: environment.map { $0.map { "\($0.key)=\($0.value)" } }, standardOutput: output[1], standardError: errorFile)
            return (processID, output[0])
        } catch {
            close(output[0])
            throw error
        }
    }

    private static func spawn(
        _ path: String, arguments: [String], environment: [String]?, standardOutput: Int32, standardError: Int32
    ) throws(ChildProcessError) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, standardOutput, STDOUT_FILENO)
        if standardError >= 0 { posix_spawn_file_actions_adddup2(&actions, standardError, STDERR_FILENO) }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup($0) } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        // A process group of its own, led by the child: whatever the child starts (Swift's crash
        // reporter, say) stays in it after the child is gone, so killProcessGroup() reaches it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        var processID: pid_t = 0
        let status =
            envp.map { posix_spawn(&processID, path, &actions, &attributes, argv, $0) }
            ?? posix_spawn(&processID, path, &actions, &attributes, argv, environ)
        guard status == 0 else { throw ChildProcessError(call: "posix_spawn \(path)", errno: status) }
        return processID
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

    /// Sends SIGTERM: the child's request to stop gracefully.
    public func terminate() {
        Glibc.kill(processID, SIGTERM)
    }

    /// Sends SIGKILL: the child stops wherever it is, as in a crash.
    public func kill() {
        Glibc.kill(processID, SIGKILL)
    }

    /// Sends SIGKILL to the child and everything it started: its process group, which processes
    /// it spawned stay in when it is gone (a crash reporter keeping the output pipe open, which
    /// would hold ``waitForExit(timeout:)`` until its timeout).
    public func killProcessGroup() {
        Glibc.kill(-processID, SIGKILL)
    }

    /// Sends `signal` (SIGABRT, for example, to crash the child as a failed check would).
    public func send(_ signal: Int32) {
        Glibc.kill(processID, signal)
    }
}

/// Why a child could not be started: the call that failed and its `errno`.
public struct ChildProcessError: Error, Sendable, CustomStringConvertible {
    /// The system call, with what it was given.
    public let call: String
    /// Its error number.
    public let errno: Int32

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// Reads a child's output to its end, cutting it into lines, then reaps the child and records
/// its exit. Runs on its own thread; owns the pipe's read end.
private final class Watcher: Sendable {
    private let processID: Int32
    private let output: Int32
    private let events: EventLog<ChildProcess.Event>

    init(processID: Int32, output: Int32, events: EventLog<ChildProcess.Event>) {
        self.processID = processID
        self.output = output
        self.events = events
    }

    func run() {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            pending.append(contentsOf: chunk[..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                events.record(.line(String(decoding: pending[..<newline], as: UTF8.self)))
                pending.removeSubrange(...newline)
            }
        }
        close(output)
        if !pending.isEmpty { events.record(.line(String(decoding: pending, as: UTF8.self))) }
        var status: Int32 = 0
        while waitpid(processID, &status, 0) < 0, errno == EINTR {}
        // The wait status: the low 7 bits are the signal that ended the child (0 if it exited),
        // the next byte its exit status.
        let signal = status & 0x7F
        events.record(signal == 0 ? .exited(status: (status >> 8) & 0xFF, signaled: false) : .exited(status: signal, signaled: true))
    }
}
