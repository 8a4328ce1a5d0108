import CLinux
import Testing
import VitrineCore
import VitrineImage
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineLibrary

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

@Suite struct RenditionMakerTests {
    static let profile = DeviceProfile(
        id: "test", name: "Test", connectors: [], mode: Size(width: 320, height: 200), edidName: nil,
        compose: Size(width: 320, height: 200), rotation: .none, rendition: Size(width: 320, height: 200),
        fit: .contain, memoryBudgetMiB: 8, note: nil)

    /// Waits for the maker's wakeup (with a deadline), then takes its outcomes.
    static func outcomes(of maker: RenditionMaker, within seconds: Int32) -> [RenditionMaker.Outcome] {
        var descriptor = pollfd(fd: maker.wakeup.descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, seconds * 1000) == 1 else { return [] }
        return maker.takeOutcomes()
    }

    /// A photo waits while the board has no room for twice its need and the margin; once it has, the rendition
    /// this profile reads is written beside it, upright and at the size the plan gives, and the original is
    /// untouched. A photo is tried once per run.
    @Test func aRenditionIsMadeOnlyWhenTheBoardHasRoom() throws {
        let folder = try TemporaryFolder()
        let size = Size(width: 1600, height: 1000)
        let original = try folder.write(
            "Trip/big.jpg",
            try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.blue, size: size), size: size, progressive: true))
        let before = try FileBytes.read(original)
        let need = 10 << 20
        let available = Locked(need)
        let asked = Locked(0)
        let maker = try RenditionMaker(
            libraryRoot: folder.path, cacheRoot: "\(folder.path)/cache", profile: Self.profile, fit: nil,
            maxMegapixels: 50, retrySeconds: 0.02,
            availableBytes: {
                asked.withLock { $0 += 1 }
                return available.withLock { $0 }
            })
        defer { maker.stop() }
        #expect(maker.submit(RenditionMaker.Job(original: original, need: need)))
        #expect(!maker.submit(RenditionMaker.Job(original: original, need: need)))
        // Looked at several times and still waiting: no room, no file.
        for _ in 0..<500 where asked.withLock({ $0 }) < 5 { usleep(10_000) }
        #expect(asked.withLock { $0 } >= 5)
        #expect(maker.waiting == 1)
        #expect(!FileBytes.exists("\(folder.path)/cache/Trip/big@320x200.jpg"))

        available.withLock { $0 = 2 * need + RenditionMaker.margin }
        let outcomes = Self.outcomes(of: maker, within: 30)
        let outcome = try #require(outcomes.first)
        #expect(outcome.result == .written("\(folder.path)/cache/Trip/big@320x200.jpg"))
        let header = try FrameRenderer(budget: MemoryBudget(limit: 64 << 20)).header(
            of: "\(folder.path)/cache/Trip/big@320x200.jpg")
        #expect(header.size == Size(width: 320, height: 200))
        #expect(header.jpeg?.process == .baseline)
        // The library is never written: the original is as it was and nothing joined it.
        #expect(try FileBytes.read(original) == before)
        #expect(try Folder.entryNames(in: "\(folder.path)/Trip") == ["big.jpg"])
        #expect(maker.waiting == 0)
    }

    /// A photo that cannot be read is reported, and the maker goes on.
    @Test func aPhotoThatCannotBeReadIsReported() throws {
        let folder = try TemporaryFolder()
        let broken = try folder.write("Trip/broken.jpg", [0xFF, 0xD8, 0xFF])
        let maker = try RenditionMaker(
            libraryRoot: folder.path, cacheRoot: "\(folder.path)/cache", profile: Self.profile, fit: nil,
            maxMegapixels: 50, availableBytes: { 1 << 40 })
        defer { maker.stop() }
        maker.submit(RenditionMaker.Job(original: broken, need: 1 << 20))
        let outcome = try #require(Self.outcomes(of: maker, within: 30).first)
        guard case .failed(let error) = outcome.result else {
            Issue.record("expected a failure, got \(outcome.result)")
            return
        }
        #expect(error.file == broken)
    }

    /// The cache is in the state folder, on an appliance a small partition: a rendition is written only while its
    /// disk keeps its floor (32 MiB, 5% of a larger disk, half of a small one) free after it, so the position and
    /// the token always have room.
    @Test func aRenditionLeavesItsDisksFloorFree() throws {
        let folder = try TemporaryFolder()
        let size = Size(width: 1600, height: 1000)
        let jpeg = try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.blue, size: size), size: size)
        let first = try folder.write("Trip/first.jpg", jpeg)
        let second = try folder.write("Trip/second.jpg", jpeg)
        // A 64 MiB partition: the floor is 32 MiB, and a 320x200 rendition is bounded by 64,000 + 64 KiB bytes.
        let total = 64 << 20
        let floor = DiskFloor.bytes(total: total)
        #expect(floor == 32 << 20)
        #expect(DiskFloor.bytes(total: 32 << 30) == (32 << 30) / 20)
        #expect(DiskFloor.bytes(total: 8 << 20) == 4 << 20)
        let bound = DiskFloor.bound(Size(width: 320, height: 200))
        let free = Locked(floor + bound - 1)
        let asked = Locked<[String]>([])
        let maker = try RenditionMaker(
            libraryRoot: folder.path, cacheRoot: "\(folder.path)/cache", profile: Self.profile, fit: nil,
            maxMegapixels: 50, availableBytes: { 1 << 40 },
            diskSpace: { path in
                asked.withLock { $0.append(path) }
                return (free.withLock { $0 }, total)
            })
        defer { maker.stop() }
        maker.submit(RenditionMaker.Job(original: first, need: 1 << 20))
        let refused = try #require(Self.outcomes(of: maker, within: 30).first)
        #expect(refused.result == .noRoom(folder: "\(folder.path)/cache", free: floor + bound - 1, floor: floor))
        #expect(!FileBytes.exists("\(folder.path)/cache/Trip/first@320x200.jpg"))
        // Asked where the cache will be, and nothing made there.
        #expect(asked.withLock { $0 } == [folder.path])
        #expect(!FileBytes.exists("\(folder.path)/cache"))

        free.withLock { $0 = floor + bound }
        maker.submit(RenditionMaker.Job(original: second, need: 1 << 20))
        let made = try #require(Self.outcomes(of: maker, within: 30).first)
        #expect(made.result == .written("\(folder.path)/cache/Trip/second@320x200.jpg"))
        let written = try FileBytes.read("\(folder.path)/cache/Trip/second@320x200.jpg")
        #expect(written.count < bound)
    }
}
