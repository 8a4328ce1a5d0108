#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value behind a pthread mutex. Not Synchronization's `Mutex`: on Linux that is a futex whose contended unlock
/// hands the lock over inside the kernel, where ThreadSanitizer cannot see it, so `make test-tsan` reported races
/// that were none whenever two threads met on it; pthread calls are what TSan understands.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched inside `withLock`, with `mutex` held.
    // Heap-allocated: pthread objects must not move, and `&` on a stored property gives no stable address.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
