#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on the monotonic clock, as a plain integer.
///
/// `ContinuousClock.Instant` is a resilient type: a struct that holds one makes every copy go
/// through runtime value witnesses, which a memory-cache entry cannot afford on its hot path.
@usableFromInline
package enum MonotonicClock {
    @usableFromInline
    package static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// `duration` in nanoseconds, saturating at the ends of the range.
    package static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ UInt64(attoseconds / 1_000_000_000)
    }
}
