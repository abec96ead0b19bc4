#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which sanitizer, if any, this process was built with: a test that cannot run under one (a
/// child process with its address space capped, which the sanitizer's shadow memory needs)
/// skips itself with `.disabled(if: Sanitizer.isActive, "...why...")`.
public enum Sanitizer {
    /// `thread` or `address`, found by the runtime's entry point in the process; nil without one.
    public static let active: String? = {
        // RTLD_DEFAULT: search every object loaded in the process.
        let everything = UnsafeMutableRawPointer(bitPattern: 0)
        if dlsym(everything, "__tsan_init") != nil { return "thread" }
        if dlsym(everything, "__asan_init") != nil { return "address" }
        return nil
    }()

    /// Whether any sanitizer is active.
    public static var isActive: Bool { active != nil }
}
