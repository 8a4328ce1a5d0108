import VitrineCore
import VitrinePlatform

/// Reads the library's category list off the player's thread. A library on a NAS or a FUSE mount can stop
/// answering for a minute (Wi-Fi, a disk spinning up), and `readdir` then sleeps with it: the player's thread
/// must never be the one waiting. Asks coalesce (a `Worker` that keeps the newest job only): while a read is out,
/// any number of asks make one more read after it, so a stalled library holds one thread and nothing piles up.
/// It also points the watcher's root watch at the folder of the library's name when the watcher asks (a path
/// lookup, which waits on the same share), before it reads the list, so the list is no older than the watch.
final class CategoryLister {
    struct Outcome: Sendable {
        var serial: Int
        var result: Result<[LibraryCategory], FileError>
        /// What `statfs` says the library is on when that is a network or FUSE filesystem (asked here too: it
        /// waits on the same share).
        var remoteKind: String?
        /// The root's follow, when one was asked for.
        var followed: LibraryWatcher.Followed?
    }

    private let library: Library
    private let worker: Worker<Outcome>
    private var lastSerial = 0
    /// The watcher's descriptor, on which follows of the root are made.
    private let watchDescriptor: Int32
    /// Follows asked for and not yet answered: every job carries them all, since a job waiting is replaced by the
    /// next ask.
    private var followsAsked: Set<LibraryWatcher.FollowReason> = []
    var wakeup: Wakeup { worker.wakeup }

    init(library: Library, watchDescriptor: Int32) throws(RuntimeError) {
        self.library = library
        self.watchDescriptor = watchDescriptor
        worker = try Worker(.newestOnly)
    }

    /// Asks for the root to be followed (for `reasons`) and the list read after it.
    func follow(_ reasons: Set<LibraryWatcher.FollowReason>) {
        followsAsked.formUnion(reasons)
        ask()
    }

    /// Asks for the list; returns the serial its outcome (or a later one's) will carry.
    @discardableResult
    func ask() -> Int {
        lastSerial += 1
        let serial = lastSerial
        let library = self.library
        let follows = followsAsked
        let descriptor = watchDescriptor
        worker.submit { _ in
            let followed =
                follows.isEmpty
                ? nil : LibraryWatcher.followRoot(descriptor: descriptor, root: library.root, reasons: follows)
            let result: Result<[LibraryCategory], FileError>
            do throws(FileError) {
                result = .success(try library.categories())
            } catch {
                result = .failure(error)
            }
            return Outcome(
                serial: serial, result: result, remoteKind: RemoteFilesystem.kind(of: library.root), followed: followed)
        }
        return serial
    }

    /// Whether a read is out or waiting.
    var isBusy: Bool { worker.isBusy }

    /// The newest list read since the last call, with every follow of the root made since, in order (a folder
    /// followed by an earlier job and replaced by a later one is the watcher's to drop).
    func take() -> (outcome: Outcome, followed: [LibraryWatcher.Followed])? {
        let outcomes = worker.take()
        guard let last = outcomes.last else { return nil }
        let followed = outcomes.compactMap(\.followed)
        for each in followed { followsAsked.subtract(each.reasons) }
        return (last, followed)
    }

    func stop() { worker.stop() }
}
