#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A mutex with a condition variable (Synchronization's Mutex has no way to wait for a change).
package final class Monitor: @unchecked Sendable {
    // @unchecked: the pthread objects are used only through lock/wait/broadcast, which are thread-safe.
    // Heap-allocated: pthread objects must not move, and `&` on a stored property gives no stable address.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        pthread_mutex_init(mutex, nil)
        // Timed waits count on CLOCK_MONOTONIC: a wall clock set back must not stretch them.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits, with the lock held by the caller (inside `locked`), until another thread broadcasts.
    package func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits like `wait()`, but at most `seconds`.
    package func wait(seconds: Double) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let total = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + seconds
        var deadline = timespec(
            tv_sec: Int(total.rounded(.down)), tv_nsec: Int((total - total.rounded(.down)) * 1e9))
        pthread_cond_timedwait(condition, mutex, &deadline)
    }

    package func broadcast() { pthread_cond_broadcast(condition) }
}
