import Testing
import VitrineCore
import VitrinePlatform
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
            clean.reading(["/photos/fine.jpg"], on: .decode)
            clean.done(on: .decode)
        }
        #expect(CrashGuard(folder: folder).notes.isEmpty)
        // The process "dies" while decoding: the marker stays as written (no done()).
        CrashGuard(folder: folder).reading(["/photos/bomb.png", "/photos/pair.jpg"], on: .decode)
        let second = CrashGuard(folder: folder)
        #expect(second.setAside.isEmpty)
        #expect(second.notes.first?.contains("/photos/bomb.png + /photos/pair.jpg") == true)
        second.reading(["/photos/bomb.png"], on: .decode)
        let third = CrashGuard(folder: folder)
        #expect(third.setAside == ["/photos/bomb.png"])
        #expect(
            third.notes.contains { $0.contains("/photos/bomb.png is set aside") && $0.contains(CrashGuard.countsName) })
        // Set aside for good (until its line is removed), and nothing else is.
        third.reading(["/photos/other.jpg"], on: .decode)
        third.done(on: .decode)
        #expect(CrashGuard(folder: folder).setAside == ["/photos/bomb.png"])
        // Without a state directory nothing is guarded, and nothing fails.
        let none = CrashGuard(folder: nil)
        none.reading(["/photos/bomb.png"], on: .decode)
        #expect(none.setAside.isEmpty)
    }

    /// Under the service the markers are in the runtime folder (in memory: a decode writes nothing to the card), and
    /// only the counts of a crash found go to the state folder.
    @Test func markersInTheRuntimeFolderCountsInTheStateFolder() throws {
        let temporary = try TemporaryFolder()
        let state = "\(temporary.path)/state"
        let runtime = "\(temporary.path)/run"
        try FileBytes.createDirectories(state)
        try FileBytes.createDirectories(runtime)
        let first = CrashGuard(folder: state, markers: runtime)
        first.reading(["/photos/fine.jpg"], on: .decode)
        first.done(on: .decode)
        #expect(try Folder.entryNames(in: state).isEmpty, "a decode wrote to the state folder")
        #expect(try Set(Folder.entryNames(in: runtime)) == ["decoding", "reading-headers"])
        CrashGuard(folder: state, markers: runtime).reading(["/photos/bomb.png"], on: .decode)
        let second = CrashGuard(folder: state, markers: runtime)
        #expect(second.notes.first?.contains("/photos/bomb.png") == true)
        #expect(try FileBytes.readText("\(state)/\(CrashGuard.countsName)") == "1\t/photos/bomb.png\n")
    }

    /// A header whose parsing crashed the player (the index worker reads them for `newest` order and portrait
    /// pairs) counts as a crash while decoding does, one on each worker adding up; once set aside the index leaves the
    /// file's header unread and still lists the photo (its file time dates it).
    @Test func aHeaderBeingReadAtTwoCrashesIsSetAsideAndTheIndexSkipsIt() throws {
        let temporary = try TemporaryFolder()
        let state = "\(temporary.path)/state"
        // Taken in 2035 by its EXIF date: read, it would come first in `newest` order; unread, its file time (now)
        // puts it after fine.jpg, taken in 2030.
        _ = try temporary.write("Lib/Cat/bomb.jpg", try CategoryIndexerTests.photo(taken: "2035:01:01 10:00:00"))
        _ = try temporary.write("Lib/Cat/fine.jpg", try CategoryIndexerTests.photo(taken: "2030:01:01 10:00:00"))
        let bomb = "\(temporary.path)/Lib/Cat/bomb.jpg"
        // One run dies reading the header, the next decoding the slide: two crashes of the same file.
        CrashGuard(folder: state).reading([bomb], on: .index)
        let second = CrashGuard(folder: state)
        #expect(second.notes.first == "the last run stopped while reading the header of \(bomb) (1 time(s) so far)")
        second.reading([bomb], on: .decode)
        let third = CrashGuard(folder: state)
        #expect(third.setAside == [bomb])
        // The index of the category under the guard reads the other header and not this one's.
        let category = LibraryCategory(name: "Cat", path: "\(temporary.path)/Lib/Cat")
        let indexer = CategoryIndexer(library: Library(root: "\(temporary.path)/Lib"), crashGuard: third)
        let index = try #require(try indexer.index(of: category, order: .newest, excluding: []))
        #expect(CategoryIndexerTests.newest(index).map(\.id.name) == ["fine", "bomb"])
        let unguarded = try #require(
            try CategoryIndexer(library: Library(root: "\(temporary.path)/Lib")).index(
                of: category, order: .newest, excluding: []))
        #expect(CategoryIndexerTests.newest(unguarded).map(\.id.name) == ["bomb", "fine"])
        // The marker is left empty: a clean start after it notes nothing.
        #expect(CrashGuard(folder: state).notes.allSatisfy { !$0.contains("the last run stopped") })
    }

    /// Two screens' shows decode on two threads with one guard: the marker names what both are reading, and what
    /// one finishes leaves the other's there.
    @Test func twoDecodeThreadsShareTheMarker() throws {
        let temporary = try TemporaryFolder()
        let guardian = CrashGuard(folder: temporary.path)
        let marker = "\(temporary.path)/decoding"
        JoinableThread { guardian.reading(["/photos/offers.jpg"], on: .decode) }.join()
        guardian.reading(["/photos/menu.jpg"], on: .decode)
        let both = Set(try FileBytes.readText(marker).split(separator: "\n").map(String.init))
        #expect(both == ["/photos/menu.jpg", "/photos/offers.jpg"])
        guardian.done(on: .decode)
        #expect(try FileBytes.readText(marker) == "/photos/offers.jpg\n")
    }
}
