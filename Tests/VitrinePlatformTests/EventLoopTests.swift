import Testing

@testable import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The loop's sources as handlers, against the kernel's epoll and eventfds.
@Suite struct EventLoopTests {
    /// Each ready descriptor reaches its own handler, with the events that were ready.
    @Test func eachSourceReachesItsHandler() throws {
        let loop = try EventLoop()
        let first = try Wakeup()
        let second = try Wakeup()
        var seen: [String] = []
        try loop.add(first.descriptor) { _ in
            first.drain()
            seen.append("first")
        }
        try loop.add(second.descriptor) { events in
            second.drain()
            seen.append("second \(events & EventLoop.readable != 0)")
        }
        second.signal()
        for ready in loop.wait() { loop.dispatch(ready) }
        first.signal()
        for ready in loop.wait() { loop.dispatch(ready) }
        #expect(seen == ["second true", "first"])
    }

    /// A handler that removes another source in the same turn: the other's event, already taken from epoll,
    /// reaches nobody.
    @Test func aSourceRemovedInTheSameTurnIsNotCalled() throws {
        let loop = try EventLoop()
        let first = try Wakeup()
        let second = try Wakeup()
        var called: [String] = []
        var sources: [EventLoop.Source] = []
        sources.append(
            // Unowned, as the player's handlers hold their owners: the loop holds the handler.
            try loop.add(first.descriptor) { [unowned loop] _ in
                called.append("first")
                loop.remove(sources[1])
            })
        sources.append(try loop.add(second.descriptor) { _ in called.append("second") })
        first.signal()
        second.signal()
        let ready = loop.wait()
        #expect(ready.count == 2)
        // Whichever comes first, only one handler runs: the first removes the second, or the second runs and
        // then the first removes it.
        let ran = ready.filter { loop.dispatch($0) }.count
        #expect(called.contains("first"))
        #expect(ran == called.count)
        #expect(loop.sourceCount == 1)
    }

    /// An owner closes its descriptor and the number is opened again for another source before the first is
    /// removed: removing the first leaves the second's registration alone.
    @Test func removingASourceWhoseNumberWasReopenedLeavesTheNewOneAlone() throws {
        let loop = try EventLoop()
        var old: [Int32] = [0, 0]
        try #require(pipe(&old) == 0)
        let oldSource = try loop.add(old[0]) { _ in }
        var fresh: [Int32] = [0, 0]
        try #require(pipe(&fresh) == 0)
        // The old file closed and another opened under its number, at once (other tests open descriptors too, so
        // the lowest free number cannot be counted on).
        try #require(dup2(fresh[0], old[0]) == old[0])
        close(fresh[0])
        let reader = old[0]
        defer {
            close(reader)
            close(old[1])
            close(fresh[1])
        }
        var freshCalls = 0
        try loop.add(reader) { _ in
            var byte: UInt8 = 0
            _ = read(reader, &byte, 1)
            freshCalls += 1
        }
        loop.remove(oldSource)
        var byte: UInt8 = 1
        _ = write(fresh[1], &byte, 1)
        // Without the guard, removing the old source would have taken the fresh one out of epoll: nothing ready.
        for ready in loop.wait(milliseconds: 2000) { loop.dispatch(ready) }
        #expect(freshCalls == 1)
    }
}
