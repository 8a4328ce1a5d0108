import Testing

@testable import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Descriptors as owned values: closed once, by their owner's end or `close()`, never again after. Each test owns
/// a pipe's write end and reads the other: an end of file there means the write end was closed (a number alone
/// would not say, since parallel tests may be given it again at once).
@Suite struct DescriptorTests {
    /// A pipe whose read end does not block: (reader, writer).
    static func pipeEnds() throws -> (Int32, Int32) {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        return (ends[0], ends[1])
    }

    /// Whether every write end of the pipe `reader` reads was closed.
    static func writerClosed(_ reader: Int32) -> Bool {
        var byte: UInt8 = 0
        return read(reader, &byte, 1) == 0
    }

    @Test func theOwnersEndClosesIt() throws {
        let (reader, writer) = try Self.pipeEnds()
        defer { close(reader) }
        do {
            let owned = Descriptor(taking: writer)
            #expect(owned.number == writer)
            #expect(!Self.writerClosed(reader))
        }
        #expect(Self.writerClosed(reader))
    }

    @Test func closeClosesItAndReleaseHandsItOver() throws {
        let (reader, writer) = try Self.pipeEnds()
        defer { close(reader) }
        let released = Descriptor(taking: writer).release()
        #expect(!Self.writerClosed(reader))
        let owned = Descriptor(taking: released)
        owned.close()
        #expect(Self.writerClosed(reader))
    }

    /// An owner whose descriptor is replaced (a VT taken again after a hangup) closes the old one as it goes.
    @Test func replacingTheOwnedOneClosesTheOld() throws {
        final class Holder {
            var owned: Descriptor
            init(_ owned: consuming Descriptor) { self.owned = owned }
        }
        let (firstReader, firstWriter) = try Self.pipeEnds()
        let (secondReader, secondWriter) = try Self.pipeEnds()
        defer {
            close(firstReader)
            close(secondReader)
        }
        let holder = Holder(Descriptor(taking: firstWriter))
        holder.owned = Descriptor(taking: secondWriter)
        #expect(Self.writerClosed(firstReader))
        #expect(!Self.writerClosed(secondReader))
        holder.owned = Descriptor(taking: -1)
        #expect(Self.writerClosed(secondReader))
    }

    @Test func aFailedCallThrowsWithItsErrnoAndName() {
        #expect(throws: RuntimeError("open", path: "/no/such/file", errno: ENOENT)) {
            _ = try SystemCall.open("open", path: "/no/such/file") { open("/no/such/file", O_RDONLY) }
        }
    }
}
