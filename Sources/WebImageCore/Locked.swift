#if canImport(Glibc)
public import Glibc
#endif

/// A value behind a pthread mutex.
///
/// `Synchronization.Mutex` on Linux locks with raw futex calls that ThreadSanitizer cannot see,
/// so every access it protects shows up as a race under `swift test --sanitize=thread`. This box
/// uses a pthread mutex, which the sanitizer understands, at the same cost when uncontended.
/// It is glibc's adaptive kind, which spins briefly before sleeping: the sections it guards last
/// tens of nanoseconds, far less than a trip through the kernel's futex wait and wake.
///
/// `@unchecked Sendable` is sound here: `value` is only reached inside `withLock`, which holds
/// the mutex for the whole access, and the mutex itself is never moved (it lives in its own
/// allocation).
@usableFromInline
package final class Locked<Value>: @unchecked Sendable {
    // Visible to inlined code: `withLock` is inlined into other modules' hot paths (a memory
    // cache hit), where a generic call through the module boundary cost several times the lookup.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    @usableFromInline
    package init(_ value: Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
