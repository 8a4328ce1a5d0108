import CLinux

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A plain POSIX thread, joined explicitly or when released. Dispatch's pool may leave work queued behind a
/// blocked caller on a one-core board, which deadlocks a producer/consumer pair; a real thread cannot. The body is
/// `@Sendable`: Swift checks everything it takes to the new thread.
public final class JoinableThread {
    private final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    private let thread: pthread_t
    private var joined = false

    /// Starts `body` on a new thread. Fails only when the system is out of threads or memory, which leaves a
    /// photo frame nothing better to do than stop.
    public init(_ body: @escaping @Sendable () -> Void) {
        thread = Self.start(body)
    }

    private static func start(_ body: @escaping @Sendable () -> Void) -> pthread_t {
        let context = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                Unmanaged<Work>.fromOpaque(raw).takeRetainedValue().body()
                return nil
            }, context)
        precondition(status == 0, "pthread_create failed with \(status)")
        return thread
    }

    /// Lowers the calling thread's priority (its nice value; Linux keeps one per thread, and threads it starts
    /// inherit it). An unprivileged thread cannot raise it back: start what must keep the usual priority first.
    public static func lowerPriority(niceness: Int32) {
        _ = vitrine_lower_thread_priority(niceness)
    }

    /// Starts `body` on a thread nobody waits for: it ends on its own (a clip's decoder, which may be inside a read
    /// of a share that stalls when the clip is left, and must not hold the player's thread up then).
    public static func detach(_ body: @escaping @Sendable () -> Void) {
        pthread_detach(start(body))
    }

    public func join() {
        guard !joined else { return }
        pthread_join(thread, nil)
        joined = true
    }

    deinit { join() }
}
