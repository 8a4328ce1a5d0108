import CLinux

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// epoll over the player's descriptors: the one place the player thread blocks. Nothing polls or sleeps in a
/// loop; every wake-up is a descriptor that became ready, and each descriptor has its handler, given by whoever
/// registered it (a link, the library follower, the runtime), which also removes it.
public final class EventLoop {
    /// One registration: its id (never reused) and its descriptor.
    public struct Source: Hashable, Sendable {
        public let id: UInt64
        public let descriptor: Int32
    }

    public struct Ready: Sendable {
        public var id: UInt64
        public var events: UInt32
    }

    public static let readable = UInt32(EPOLLIN.rawValue)
    public static let writable = UInt32(EPOLLOUT.rawValue)
    /// Out-of-band data: a CEC adapter's events.
    public static let priority = UInt32(EPOLLPRI.rawValue)

    private var owned: Descriptor?
    private var descriptor: Int32 { owned?.number ?? -1 }
    private var handlers: [UInt64: (UInt32) -> Void] = [:]
    /// The registration each descriptor number has now: a number closed by its owner and opened again for another
    /// source belongs to the newer registration, which removing the older one must leave alone.
    private var registered: [Int32: UInt64] = [:]
    private var lastID: UInt64 = 0

    public init() throws(RuntimeError) {
        owned = try SystemCall.open("create an epoll instance") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    }

    /// Closing the epoll descriptor is explicit: the loop's owner decides when the show is over.
    public func close() {
        owned = nil
        handlers = [:]
        registered = [:]
    }

    /// Watches `fd` for `events`; `handler` runs on the loop's thread with the events that were ready. Handlers
    /// that reach back into their owner capture it unowned or weak: the loop outlives none of them.
    @discardableResult
    public func add(_ fd: Int32, events: UInt32 = EventLoop.readable, _ handler: @escaping (UInt32) -> Void)
        throws(RuntimeError) -> Source
    {
        lastID += 1
        let source = Source(id: lastID, descriptor: fd)
        guard vitrine_epoll_add(descriptor, fd, events, source.id) == 0 else {
            throw .last("watch descriptor \(fd)")
        }
        handlers[source.id] = handler
        registered[fd] = source.id
        return source
    }

    /// Watches a registered source for other events.
    public func change(_ source: Source, events: UInt32) throws(RuntimeError) {
        guard registered[source.descriptor] == source.id else { return }
        guard vitrine_epoll_modify(descriptor, source.descriptor, events, source.id) == 0 else {
            throw .last("watch descriptor \(source.descriptor)")
        }
    }

    /// Stops watching `source`; its handler is not called again, even for an event already taken from epoll in
    /// this turn. Harmless for a source removed before or never added.
    public func remove(_ source: Source?) {
        guard let source, handlers.removeValue(forKey: source.id) != nil else { return }
        guard registered[source.descriptor] == source.id else { return }
        registered[source.descriptor] = nil
        // The owner may have closed the descriptor already (epoll then forgot it by itself): EBADF or ENOENT then
        // say only that.
        _ = epoll_ctl(descriptor, EPOLL_CTL_DEL, source.descriptor, nil)
    }

    /// Blocks until something is ready (or `milliseconds` passed, for tests); EINTR counts as nothing ready.
    public func wait(milliseconds: Int32 = -1) -> [Ready] {
        var ids = [UInt64](repeating: 0, count: 64)
        var events = [UInt32](repeating: 0, count: 64)
        let count = vitrine_epoll_wait(descriptor, &ids, &events, 64, milliseconds)
        guard count > 0 else { return [] }
        return (0..<Int(count)).map { Ready(id: ids[$0], events: events[$0]) }
    }

    /// Runs the handler of what is ready; false when its source was removed meanwhile.
    @discardableResult
    public func dispatch(_ ready: Ready) -> Bool {
        guard let handler = handlers[ready.id] else { return false }
        handler(ready.events)
        return true
    }

    /// How many sources are registered (for tests and the status).
    public var sourceCount: Int { handlers.count }
}

/// The sources one part registered in a loop, removed together when the part closes.
public struct LoopSources {
    public let loop: EventLoop
    private var sources: [EventLoop.Source] = []

    public init(_ loop: EventLoop) { self.loop = loop }

    @discardableResult
    public mutating func add(_ fd: Int32, events: UInt32 = EventLoop.readable, _ handler: @escaping (UInt32) -> Void)
        throws(RuntimeError) -> EventLoop.Source
    {
        let source = try loop.add(fd, events: events, handler)
        sources.append(source)
        return source
    }

    public mutating func removeAll() {
        for source in sources { loop.remove(source) }
        sources = []
    }
}
