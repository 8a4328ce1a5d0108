import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineLibrary

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The watcher against the real kernel's inotify, in a folder made here.
struct LibraryWatcherTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
        mkdir("\(folder.path)/Cat", 0o755)
    }

    /// Watches `name` as the player does: dropped on its thread, placed as the index worker does, adopted.
    @discardableResult
    func watch(_ watcher: LibraryWatcher, _ name: String) -> LibraryWatcher.Changes {
        let category = LibraryCategory(name: name, path: name.isEmpty ? folder.path : "\(folder.path)/\(name)")
        watcher.watch(category)
        guard !name.isEmpty else { return LibraryWatcher.Changes() }
        let placed = LibraryWatcher.placeWatches(descriptor: watcher.descriptor, folder: category.path)
        return watcher.adopt(placed, for: category, now: 0)
    }

    /// Creates (and closes) an empty file: two events, IN_CREATE and IN_CLOSE_WRITE.
    func touch(_ path: String) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        if descriptor >= 0 { close(descriptor) }
    }

    /// More events than the kernel queues (16,384 by default) while nobody reads: the watcher is told of the
    /// overflow, forgets the files it thought open, and watches a folder that came in the flood.
    @Test func anOverflowRebuildsTheWatchesAndTheFilesBeingWritten() throws {
        let watcher = try LibraryWatcher(root: folder.path)
        watch(watcher, "Cat")
        let open = Glibc.open("\(folder.path)/Cat/open.jpg", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        defer { close(open) }
        _ = watcher.read()
        #expect(watcher.beingWritten == ["\(folder.path)/Cat/open.jpg"])
        var queueLimit = 16_384
        if let text = try? FileBytes.readText("/proc/sys/fs/inotify/max_queued_events"),
            let limit = Int(text.split(separator: "\n").first ?? "")
        {
            queueLimit = limit
        }
        for index in 0..<(queueLimit / 2 + 100) { touch("\(folder.path)/Cat/f\(index).jpg") }
        mkdir("\(folder.path)/Cat/New", 0o755)
        for index in 0..<100 { touch("\(folder.path)/Cat/g\(index).jpg") }
        let flood = watcher.read()
        #expect(flood.overflowed)
        #expect(watcher.beingWritten.isEmpty)
        // The rescan's index job places the watches again, the new folder's among them.
        watch(watcher, "Cat")
        touch("\(folder.path)/Cat/New/z.jpg")
        let after = watcher.read()
        #expect(after.finished.contains("\(folder.path)/Cat/New/z.jpg"))
    }

    /// The player's own reads change nothing: the lister opening the root, the index opening a category's folders
    /// and reading a photo's header. (Taken as changes, each read asked for the next: the idle player spun.)
    @Test func readingTheLibraryIsNoChange() throws {
        let watcher = try LibraryWatcher(root: folder.path)
        touch("\(folder.path)/Cat/photo.jpg")
        touch("\(folder.path)/root.jpg")
        watch(watcher, "Cat")
        _ = watcher.read(now: 1)
        _ = watcher.settle(now: 10)
        for path in [folder.path, "\(folder.path)/Cat"] {
            let directory = opendir(path)
            while let directory, readdir(directory) != nil {}
            if let directory { closedir(directory) }
        }
        for path in ["\(folder.path)/Cat/photo.jpg", "\(folder.path)/root.jpg"] {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            var byte: UInt8 = 0
            _ = read(descriptor, &byte, 1)
            close(descriptor)
        }
        #expect(watcher.read(now: 11) == LibraryWatcher.Changes())
        #expect(watcher.followsWanted.isEmpty)
        #expect(watcher.nextSettle == nil)
    }

    /// A photo arriving in or leaving the root is said as such, not as a changed category list: a flat library of
    /// 100,000 photos is then not listed again for every arrival. A folder made there still changes the list.
    @Test func rootPhotosComingAndGoingAreToldApartFromFolders() throws {
        let watcher = try LibraryWatcher(root: folder.path)
        touch("\(folder.path)/flat.jpg")
        let arrived = watcher.read()
        #expect(arrived.rootPhotoArrived)
        #expect(!arrived.rootPhotoWent)
        #expect(!arrived.categoriesChanged)
        unlink("\(folder.path)/flat.jpg")
        let went = watcher.read()
        #expect(went.rootPhotoWent)
        #expect(!went.categoriesChanged)
        mkdir("\(folder.path)/Trips", 0o755)
        #expect(watcher.read().categoriesChanged)
    }

    /// Makes the root's follows the watcher asked for, as the lister's worker does, and hands them back.
    func follow(_ watcher: LibraryWatcher) -> LibraryWatcher.Changes {
        let wanted = watcher.takeFollowsWanted()
        guard !wanted.isEmpty else { return LibraryWatcher.Changes() }
        return watcher.rootFollowed(
            LibraryWatcher.followRoot(descriptor: watcher.descriptor, root: watcher.root, reasons: wanted))
    }

    /// A library that is not there yet is no error: it is looked for, and watched once it is made.
    @Test func aMissingLibraryIsLookedForAndWatchedWhenItAppears() throws {
        let root = "\(folder.path)/usb/photos"
        let watcher = try LibraryWatcher(root: root)
        #expect(watcher.rootMissing)
        watcher.lookForRoot()
        #expect(watcher.followsWanted == [.look])
        #expect(follow(watcher) == LibraryWatcher.Changes())
        #expect(watcher.rootMissing)
        mkdir("\(folder.path)/usb", 0o755)
        mkdir(root, 0o755)
        watcher.lookForRoot()
        #expect(follow(watcher).rootReplaced)
        #expect(!watcher.rootMissing)
        mkdir("\(root)/Trips", 0o755)
        #expect(watcher.read().categoriesChanged)
        // Gone again (a stick pulled): the watcher asks for a follow, which finds nothing: missing once more.
        rmdir("\(root)/Trips")
        rmdir(root)
        _ = watcher.read()
        #expect(watcher.followsWanted.contains(.gone))
        #expect(!follow(watcher).rootReplaced)
        #expect(watcher.rootMissing)
    }

    /// A sync tool renames a new tree into place: reading the events makes no path lookup (it sleeps with a stalled
    /// share), it asks for a follow; the follow watches the new folder and says everything must be read again.
    /// Events in the new folder then count, and the old folder's are no longer the library's.
    @Test func aReplacedLibraryIsFollowedOffTheReadersThread() throws {
        let root = "\(folder.path)/library"
        mkdir(root, 0o755)
        let watcher = try LibraryWatcher(root: root)
        mkdir("\(folder.path)/incoming", 0o755)
        mkdir("\(folder.path)/incoming/Trips", 0o755)
        #expect(rename(root, "\(folder.path)/old") == 0)
        #expect(rename("\(folder.path)/incoming", root) == 0)
        let read = watcher.read()
        #expect(!read.rootReplaced)
        #expect(watcher.followsWanted.contains(.appeared))
        #expect(follow(watcher).rootReplaced)
        #expect(!watcher.rootMissing)
        touch("\(folder.path)/old/stale.jpg")
        mkdir("\(root)/New", 0o755)
        let after = watcher.read()
        #expect(after.categoriesChanged)
        #expect(!after.rootPhotoArrived)
        // Followed again with nothing new there: no change.
        watcher.lookForRoot()
        #expect(watcher.followsWanted.isEmpty)
    }

    /// Links that appear (`ln`, `cp -l`, rsync `--link-dest`, `ln -s`) are never written and closed: they count
    /// once they have gone unopened for `settleSeconds`. A file being written still waits for its close.
    @Test func hardAndSymbolicLinksCountWhenTheyAppear() throws {
        let watcher = try LibraryWatcher(root: folder.path)
        watch(watcher, "Cat")
        mkdir("\(folder.path)/Elsewhere", 0o755)
        touch("\(folder.path)/Elsewhere/photo.jpg")
        #expect(link("\(folder.path)/Elsewhere/photo.jpg", "\(folder.path)/Cat/hard.jpg") == 0)
        #expect(symlink("\(folder.path)/Elsewhere/photo.jpg", "\(folder.path)/Cat/soft.jpg") == 0)
        let writing = Glibc.open("\(folder.path)/Cat/writing.jpg", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        defer { close(writing) }
        let changes = watcher.read(now: 100)
        #expect(changes.finished.isEmpty)
        #expect(watcher.nextSettle == 100 + LibraryWatcher.settleSeconds)
        let settled = watcher.settle(now: 100 + LibraryWatcher.settleSeconds)
        #expect(settled.finished == ["\(folder.path)/Cat/hard.jpg", "\(folder.path)/Cat/soft.jpg"])
        #expect(settled.activeChanged)
        #expect(watcher.beingWritten == ["\(folder.path)/Cat/writing.jpg"])
        #expect(watcher.nextSettle == nil)
        close(writing)
        #expect(watcher.read(now: 101).finished == ["\(folder.path)/Cat/writing.jpg"])
    }

    /// A category switch places its watches on the index worker; what arrives in the category while they are
    /// handed over is not lost but replayed when the player's thread takes them.
    @Test func eventsWhileTheWatchesAreHandedOverAreReplayed() throws {
        let watcher = try LibraryWatcher(root: folder.path)
        let category = LibraryCategory(name: "Cat", path: "\(folder.path)/Cat")
        watcher.watch(category)
        let placed = LibraryWatcher.placeWatches(descriptor: watcher.descriptor, folder: category.path)
        touch("\(folder.path)/Cat/early.jpg")
        #expect(watcher.read(now: 1).finished.isEmpty)
        let replayed = watcher.adopt(placed, for: category, now: 1)
        #expect(replayed.finished == ["\(folder.path)/Cat/early.jpg"])
        #expect(replayed.activeChanged)
        // Watches handed over for a category the show has left are dropped.
        mkdir("\(folder.path)/Other", 0o755)
        let other = LibraryCategory(name: "Other", path: "\(folder.path)/Other")
        let stale = LibraryWatcher.placeWatches(descriptor: watcher.descriptor, folder: other.path)
        #expect(watcher.adopt(stale, for: other, now: 2) == LibraryWatcher.Changes())
        touch("\(folder.path)/Other/late.jpg")
        #expect(watcher.read(now: 3).finished.isEmpty)
        touch("\(folder.path)/Cat/late.jpg")
        #expect(watcher.read(now: 3).finished == ["\(folder.path)/Cat/late.jpg"])
    }

    /// The web remote's upload: the photo is written under a hidden name, linked to its own name and the hidden
    /// one removed, often before the player reads a single event; then the photo is read at once (its rendition
    /// is made). It was held forever as "being written", so uploads into the category on screen never played.
    @Test func aLinkWhoseSourceIsGoneAndThatIsReadAtOnceStillCounts() throws {
        let watcher = try LibraryWatcher(root: folder.path)
        watch(watcher, "Cat")
        let hidden = "\(folder.path)/Cat/.upload-1234.part"
        touch(hidden)
        #expect(link(hidden, "\(folder.path)/Cat/upload.jpg") == 0)
        #expect(unlink(hidden) == 0)
        let reader = Glibc.open("\(folder.path)/Cat/upload.jpg", O_RDONLY | O_CLOEXEC)
        #expect(reader >= 0)
        close(reader)
        #expect(watcher.read(now: 10).finished.isEmpty)
        #expect(watcher.beingWritten == ["\(folder.path)/Cat/upload.jpg"])
        let settled = watcher.settle(now: 10 + LibraryWatcher.settleSeconds)
        #expect(settled.finished == ["\(folder.path)/Cat/upload.jpg"])
        #expect(watcher.beingWritten.isEmpty)
    }

    /// The root category's photos arrive the same way when the root is on screen.
    @Test func aLinkInTheRootCountsForTheRootCategory() throws {
        let watcher = try LibraryWatcher(root: folder.path)
        watch(watcher, "")
        mkdir("\(folder.path)/Elsewhere", 0o755)
        touch("\(folder.path)/Elsewhere/photo.jpg")
        #expect(link("\(folder.path)/Elsewhere/photo.jpg", "\(folder.path)/root.jpg") == 0)
        _ = watcher.read(now: 5)
        let settled = watcher.settle(now: 5 + LibraryWatcher.settleSeconds)
        #expect(settled.rootPhotoArrived)
        #expect(settled.finished == ["\(folder.path)/root.jpg"])
    }
}
