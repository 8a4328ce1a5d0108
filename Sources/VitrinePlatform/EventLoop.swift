import CLinux

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// epoll over the player's descriptors: the one place the player thread blocks. Nothing polls or sleeps in a
/// loop; every wake-up is a descriptor that became ready.
public final class EventLoop {
    public struct Ready: Sendable {
        public var token: UInt64
        public var events: UInt32
    }

    public static let readable = UInt32(EPOLLIN.rawValue)
    public static let writable = UInt32(EPOLLOUT.rawValue)
    /// Out-of-band data: a CEC adapter's events.
    public static let priority = UInt32(EPOLLPRI.rawValue)

    private var descriptor: Int32

    public init() throws(RuntimeError) {
        descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard descriptor >= 0 else { throw .last("create an epoll instance") }
    }

    /// Closing the epoll descriptor is explicit: the loop's owner decides when the show is over.
    public func close() {
        guard descriptor >= 0 else { return }
        _ = Glibc.close(descriptor)
        descriptor = -1
    }

    deinit { close() }

    public func add(_ fd: Int32, token: UInt64, events: UInt32 = EventLoop.readable) throws(RuntimeError) {
        guard vitrine_epoll_add(descriptor, fd, events, token) == 0 else { throw .last("watch descriptor \(fd)") }
    }

    public func remove(_ fd: Int32) {
        _ = epoll_ctl(descriptor, EPOLL_CTL_DEL, fd, nil)
    }

    /// Blocks until something is ready; EINTR counts as nothing ready.
    public func wait() -> [Ready] {
        var tokens = [UInt64](repeating: 0, count: 64)
        var events = [UInt32](repeating: 0, count: 64)
        let count = vitrine_epoll_wait(descriptor, &tokens, &events, 64, -1)
        guard count > 0 else { return [] }
        return (0..<Int(count)).map { Ready(token: tokens[$0], events: events[$0]) }
    }
}
