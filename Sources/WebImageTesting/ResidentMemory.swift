public import Foundation

/// This process's resident set size, read from `/proc/self/statm` (Linux): what a leak that
/// touches its memory makes grow, and what the soak run samples.
public enum ResidentMemory {
    /// The resident set in bytes, or nil where `/proc` is not mounted.
    public static func current() -> Int? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        // Fields: size resident shared text lib data dt, in pages.
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
