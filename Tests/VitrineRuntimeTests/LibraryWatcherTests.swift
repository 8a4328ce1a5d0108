import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineRuntime

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

    /// Creates (and closes) an empty file: two events, IN_CREATE and IN_CLOSE_WRITE.
    func touch(_ path: String) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        if descriptor >= 0 { close(descriptor) }
    }

    /// More events than the kernel queues (16,384 by default) while nobody reads: the watcher is told of the
    /// overflow, forgets the files it thought open, and watches a folder that came in the flood.
    @Test func anOverflowRebuildsTheWatchesAndTheFilesBeingWritten() throws {
        let watcher = try LibraryWatcher(root: folder.path)
        watcher.watch(LibraryCategory(name: "Cat", path: "\(folder.path)/Cat"))
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
        touch("\(folder.path)/Cat/New/z.jpg")
        let after = watcher.read()
        #expect(after.finished.contains("\(folder.path)/Cat/New/z.jpg"))
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

    /// A library that is not there yet is no error: it is looked for, and watched once it is made.
    @Test func aMissingLibraryIsLookedForAndWatchedWhenItAppears() throws {
        let root = "\(folder.path)/usb/photos"
        let watcher = try LibraryWatcher(root: root)
        #expect(watcher.rootMissing)
        #expect(!watcher.lookForRoot())
        mkdir("\(folder.path)/usb", 0o755)
        mkdir(root, 0o755)
        #expect(watcher.lookForRoot())
        #expect(!watcher.rootMissing)
        mkdir("\(root)/Trips", 0o755)
        #expect(watcher.read().categoriesChanged)
        // Gone again (a stick pulled): missing once more.
        rmdir("\(root)/Trips")
        rmdir(root)
        _ = watcher.read()
        #expect(watcher.rootMissing)
    }

    /// Links that appear (`ln`, `cp -l`, rsync `--link-dest`, `ln -s`) are never written and closed: they count at
    /// once. A file being written still waits for its close.
    @Test func hardAndSymbolicLinksCountWhenTheyAppear() throws {
        let watcher = try LibraryWatcher(root: folder.path)
        watcher.watch(LibraryCategory(name: "Cat", path: "\(folder.path)/Cat"))
        mkdir("\(folder.path)/Elsewhere", 0o755)
        touch("\(folder.path)/Elsewhere/photo.jpg")
        #expect(link("\(folder.path)/Elsewhere/photo.jpg", "\(folder.path)/Cat/hard.jpg") == 0)
        #expect(symlink("\(folder.path)/Elsewhere/photo.jpg", "\(folder.path)/Cat/soft.jpg") == 0)
        let writing = Glibc.open("\(folder.path)/Cat/writing.jpg", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        defer { close(writing) }
        let changes = watcher.read()
        #expect(changes.finished == ["\(folder.path)/Cat/hard.jpg", "\(folder.path)/Cat/soft.jpg"])
        #expect(watcher.beingWritten == ["\(folder.path)/Cat/writing.jpg"])
    }
}
