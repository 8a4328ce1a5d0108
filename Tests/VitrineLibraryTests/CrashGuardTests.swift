import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineLibrary

/// A photo the player died decoding, twice, is set aside at the next start instead of crashing it again.
@Suite struct CrashGuardTests {
    @Test func aPhotoBeingDecodedAtTwoCrashesIsSetAside() throws {
        let temporary = try TemporaryFolder()
        let folder = temporary.path
        // A clean decode leaves nothing behind.
        do {
            let clean = CrashGuard(folder: folder)
            clean.decoding(["/photos/fine.jpg"])
            clean.done()
        }
        #expect(CrashGuard(folder: folder).notes.isEmpty)
        // The process "dies" while decoding: the marker stays as written (no done()).
        CrashGuard(folder: folder).decoding(["/photos/bomb.png", "/photos/pair.jpg"])
        let second = CrashGuard(folder: folder)
        #expect(second.setAside.isEmpty)
        #expect(second.notes.first?.contains("/photos/bomb.png + /photos/pair.jpg") == true)
        second.decoding(["/photos/bomb.png"])
        let third = CrashGuard(folder: folder)
        #expect(third.setAside == ["/photos/bomb.png"])
        #expect(
            third.notes.contains { $0.contains("/photos/bomb.png is set aside") && $0.contains(CrashGuard.countsName) })
        // Set aside for good (until its line is removed), and nothing else is.
        third.decoding(["/photos/other.jpg"])
        third.done()
        #expect(CrashGuard(folder: folder).setAside == ["/photos/bomb.png"])
        // Without a state directory nothing is guarded, and nothing fails.
        let none = CrashGuard(folder: nil)
        none.decoding(["/photos/bomb.png"])
        #expect(none.setAside.isEmpty)
    }
}
