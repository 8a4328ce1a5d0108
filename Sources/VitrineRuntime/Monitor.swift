#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A mutex with a condition variable (Synchronization's Mutex has no way to wait for a change).
final class Monitor: @unchecked Sendable {
    // @unchecked: the pthread objects are used only through lock/wait/broadcast, which are thread-safe.
    // Heap-allocated: pthread objects must not move, and `&` on a stored property gives no stable address.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits, with the lock held by the caller (inside `locked`), until another thread broadcasts.
    func wait() { pthread_cond_wait(condition, mutex) }

    func broadcast() { pthread_cond_broadcast(condition) }
}
