import Foundation

/// What the machine and the process's cgroup say about memory.
enum SystemMemory {
    /// The cgroup v2 `memory.max` of this process's cgroup, or nil when there is none or it is
    /// `max` (no limit).
    static func cgroupMemoryLimit(
        procSelfCgroup: String = "/proc/self/cgroup",
        cgroupRoot: String = "/sys/fs/cgroup"
    ) -> Int? {
        guard let membership = try? String(contentsOfFile: procSelfCgroup, encoding: .utf8) else { return nil }
        // cgroup v2 lists one line, "0::/path/of/the/group".
        guard let line = membership.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) else { return nil }
        let group = line.dropFirst(3)
        var directory = cgroupRoot + (group == "/" ? "" : String(group))
        // A limit may be set on any ancestor; the tightest one applies.
        var tightest: Int?
        while directory.count >= cgroupRoot.count {
            if let text = try? String(contentsOfFile: directory + "/memory.max", encoding: .utf8),
                let limit = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                tightest = min(tightest ?? .max, limit)
            }
            guard let slash = directory.lastIndex(of: "/"), directory != cgroupRoot else { break }
            directory = String(directory[..<slash])
        }
        return tightest
    }
}
