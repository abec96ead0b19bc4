// A child process for the tests that need a second process or one they can kill: it opens a
// disk cache and does what its arguments say, printing one line per step on stdout.
import Foundation
import WebImage
import WebImageTesting

#if canImport(Glibc)
import Glibc
#endif

/// Writes a line straight to the pipe, unbuffered, so the parent sees it before a kill.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func openCache(
    _ path: String, policy: DiskCacheConfiguration.LockPolicy = .readOnly, synchronous: Bool = false, packed: Bool = true
) throws -> DiskCache {
    try DiskCache(
        directory: URL(fileURLWithPath: path),
        configuration: DiskCacheConfiguration(
            sizeLimit: 0, synchronousWrites: synchronous, lockPolicy: policy, packedEntryLimit: packed ? 32 * 1024 : 0)
    )
}

/// Says whether the cache is read-only, how many bytes `key` has, and whether a store works.
func reportReadAndStore(_ cache: DiskCache, key: String) throws {
    say("read-only \(cache.isReadOnly)")
    say("read \(try cache.data(for: key)?.count ?? -1)")
    do {
        try cache.store(Data([1, 2, 3]), for: "from-child")
        say("store ok")
    } catch {
        say("store failed \(error.code)")
    }
}

/// The bytes of address space the process maps now (VmSize in /proc/self/status).
func mappedBytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmSize:") } ?? ""
    return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "write-loop":
        // write-loop DIR COUNT files|packed: store entries 0..<COUNT, saying "stored N" after each,
        // then store them again and again until killed, so a kill always lands in the middle of a
        // write run.
        let cache = try openCache(arguments[1], synchronous: true, packed: arguments[3] == "packed")
        let count = Int(arguments[2])!
        for sequence in 0... {
            let index = sequence % count
            try cache.store(
                TestPayload.bytes(index), for: "https://example.com/\(index).png", metadata: DiskCacheMetadata(etag: "\"\(index)\""))
            say("stored \(sequence)")
        }
    case "open":
        // open DIR POLICY KEY: open, report the mode, read KEY, try to store, report.
        say("opening")
        let cache = try openCache(arguments[1], policy: arguments[2] == "wait" ? .wait : .readOnly)
        try reportReadAndStore(cache, key: arguments[3])
    case "read-only":
        // read-only DIR KEY: as a user who cannot write DIR (dropping root to nobody), read and store.
        if getuid() == 0 {
            guard setgid(65534) == 0, setuid(65534) == 0 else {
                say("cannot drop root")
                exit(1)
            }
        }
        try reportReadAndStore(try openCache(arguments[1]), key: arguments[2])
    case "file-size-limit":
        // file-size-limit DIR BYTES COUNT: under RLIMIT_FSIZE, store COUNT entries, then read back.
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit(rlim_cur: rlim_t(arguments[2])!, rlim_max: rlim_t(arguments[2])!)
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        let cache = try openCache(arguments[1])
        var stored: [Int] = []
        for index in 0..<Int(arguments[3])! {
            do {
                try cache.store(TestPayload.bytes(index), for: "k\(index)")
                stored.append(index)
            } catch {
                say("error \(index) \(error.code)")
            }
        }
        let intact = stored.filter { (try? cache.data(for: "k\($0)")) == TestPayload.bytes($0) }.count
        say("stored \(stored.count) intact \(intact) count \(cache.count)")
    case "decode-memory-limited":
        // decode-memory-limited FILE: with the address space capped at 1 GiB above what the
        // process maps already, decode FILE whole and through the lazy animated coder, saying
        // "decode CODE" and "animated CODE" (or "ok"). A decoder that allocates what the header
        // declares before checking the limits fails to allocate here instead of refusing.
        let data = try Data(contentsOf: URL(fileURLWithPath: arguments[1]))
        let headroom = rlim_t(mappedBytes() + (1 << 30))
        var limit = rlimit(rlim_cur: headroom, rlim_max: headroom)
        guard setrlimit(Int32(RLIMIT_AS.rawValue), &limit) == 0 else {
            say("cannot limit memory")
            exit(1)
        }
        do {
            _ = try CodersManager().decode(data)
            say("decode ok")
        } catch {
            say("decode \(error.code)")
        }
        do {
            _ = try CodersManager().animatedImageProvider(for: data)
            say("animated ok")
        } catch {
            say("animated \(error.code)")
        }
    default:
        say("unknown command")
        exit(2)
    }
} catch {
    say("failed \(error)")
    exit(1)
}
