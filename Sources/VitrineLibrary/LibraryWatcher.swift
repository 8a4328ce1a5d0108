import CLinux
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// inotify on the library root (categories appearing and going) and on the active category's folders (photos
/// arriving and going). Only finished files count: a file is announced when it is closed after writing or moved
/// in, never while it is being written. A name that appears without being opened (a hard link as `cp -l` or the
/// web remote's upload make, a symbolic link, a `linkat` of an `O_TMPFILE`) is complete as it appears: creating a
/// file with open(2) queues IN_OPEN right after IN_CREATE in the same call, so a name not opened within
/// `settleSeconds` was linked, and no close will ever announce it.
public final class LibraryWatcher {
    public struct Changes: Equatable {
        /// A folder appeared or went in the root, or the root itself moved: the category list may have changed.
        public var categoriesChanged = false
        /// Files of the active category changed (for the root category, files directly in the root).
        public var activeChanged = false
        /// A photo arrived directly in the root (the root category appears with the first), or one went from there
        /// (it goes with the last). Kept apart from `categoriesChanged`: a flat library of 100,000 photos would
        /// otherwise be listed again for every arrival.
        public var rootPhotoArrived = false
        public var rootPhotoWent = false
        /// Files closed after writing or moved in: their slides are new or replaced.
        public var finished: Set<String> = []
        /// The kernel dropped events: rescan everything.
        public var overflowed = false
        /// The library folder itself was replaced (a sync tool renamed a new tree into place, or it was deleted and
        /// made again): the watches now follow the new folder; rescan everything and watch the category again.
        public var rootReplaced = false
    }

    private let owned: Descriptor
    public var descriptor: Int32 { owned.number }
    public let root: String
    private var rootWatch: Int32 = -1
    /// The folder holding the library: tells when a folder of the library's name appears there again.
    private var parentWatch: Int32 = -1
    private let rootName: String
    private var categoryWatches: [Int32: String] = [:]
    /// Events of watches not (yet) known here: a worker is placing the category's watches. Replayed by `adopt`;
    /// bounded, and a flood beyond the bound is taken as an overflow.
    private var unclaimed: [(inotify_event, String)] = []
    static let unclaimedLimit = 4096
    private var activeIsRoot = false
    /// Files created and not yet closed: never indexed until they are.
    public private(set) var beingWritten: Set<String> = []
    /// Names created and not (yet) seen opened, with when: links, unless their IN_OPEN is still to come.
    private var created: [String: (time: Double, inRoot: Bool)] = [:]
    /// The name the last event created, if the last event was a creation: only the IN_OPEN right after it comes
    /// from the same open(2). A later one may be a reader (the player itself, or the web remote making a
    /// rendition of an upload), which must not make a link wait for a close that never comes.
    private var justCreated: String?
    /// How long a created name waits for its IN_OPEN before it is taken as a link. The two events come from the
    /// same system call, so this only needs to cover the loop reading between them.
    public static let settleSeconds = 0.2

    /// When `settle` has names to release; nil when none wait.
    public var nextSettle: Double? { created.values.map(\.time).min().map { $0 + Self.settleSeconds } }

    static let fileEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_OPEN)
    static let folderEvents = UInt32(IN_DELETE_SELF | IN_MOVE_SELF)

    /// The library folder is not there (a USB stick or a NAS not mounted yet, a folder not made yet): the caller
    /// asks `lookForRoot` now and then, since a mount brings no inotify event.
    public private(set) var rootMissing = false
    private var active: LibraryCategory?

    public init(root: String) throws(RuntimeError) {
        self.root = root
        rootName = root.split(separator: "/").last.map(String.init) ?? root
        owned = try SystemCall.open("start inotify") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        do {
            rootWatch = try SystemCall.run("watch the library", path: root) { [owned = owned.number] in
                inotify_add_watch(owned, root, Self.fileEvents | Self.folderEvents)
            }
        } catch  where error.errno == ENOENT || error.errno == ENOTDIR {
            rootMissing = true
        }
        // Without the parent (unreadable, or the root is "/") a replaced library is noticed only on a restart.
        parentWatch = inotify_add_watch(
            descriptor, PathText.directory(of: root), UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR))
    }

    /// Why the root watch is to be pointed again at whatever folder has the library's name.
    public enum FollowReason: Hashable, Sendable {
        /// The kernel dropped events: the folder may have been replaced unseen.
        case overflow
        /// A folder of the library's name appeared beside it.
        case appeared
        /// The watched folder went (deleted, unmounted) or moved away.
        case gone
        /// The library is missing and looked for now and then (a mount brings no inotify event).
        case look
    }

    /// Follows of the root asked for and not yet handed to a worker (`takeFollowsWanted`). Following means a path
    /// lookup of the root, which sleeps with a stalled share, so it never runs on the player's thread.
    public private(set) var followsWanted: Set<FollowReason> = []

    /// The follows asked for since the last call, for a worker to make with `followRoot(descriptor:root:)`.
    public func takeFollowsWanted() -> Set<FollowReason> {
        defer { followsWanted = [] }
        return followsWanted
    }

    /// What a worker's `followRoot` found: the watch of the folder now at the library's path, or the errno.
    public struct Followed: Sendable, Equatable {
        public var reasons: Set<FollowReason>
        public var watch: Int32
        public var errno: Int32

        public init(reasons: Set<FollowReason>, watch: Int32, errno: Int32) {
            self.reasons = reasons
            self.watch = watch
            self.errno = errno
        }
    }

    /// Watches whatever folder now has the library's name, on the watcher's descriptor: for a worker thread
    /// (inotify descriptors may be used from any thread); the watcher takes the result with `rootFollowed`.
    public static func followRoot(descriptor: Int32, root: String, reasons: Set<FollowReason>) -> Followed {
        let watch = inotify_add_watch(descriptor, root, fileEvents | folderEvents)
        return Followed(reasons: reasons, watch: watch, errno: watch < 0 ? Glibc.errno : 0)
    }

    /// Takes a worker's follow of the root: a new folder there is watched and everything must be read again
    /// (`rootReplaced`); no folder there after the old one went makes the library missing.
    public func rootFollowed(_ followed: Followed) -> Changes {
        var changes = Changes()
        guard followed.watch >= 0 else {
            if rootWatch < 0 { rootMissing = true }
            return changes
        }
        guard followed.watch != rootWatch else { return changes }
        if rootWatch >= 0 { inotify_rm_watch(descriptor, rootWatch) }
        rootWatch = followed.watch
        rootMissing = false
        changes.rootReplaced = true
        return changes
    }

    /// While the library is missing: asks for it to be looked for (`followsWanted`).
    public func lookForRoot() {
        if rootMissing { followsWanted.insert(.look) }
    }

    /// Watches `category` instead of the previous one, in two steps: this one on the player's thread drops the old
    /// watches, and `placeWatches` on the index worker watches the new folders (a path lookup and a `readdir` per
    /// folder, which sleep with a stalled share), whose result `adopt` takes back. Events of folders watched
    /// meanwhile are kept and replayed then.
    public func watch(_ category: LibraryCategory) {
        active = category
        for watch in categoryWatches.keys { inotify_rm_watch(descriptor, watch) }
        categoryWatches = [:]
        unclaimed = []
        activeIsRoot = category.isRoot
    }

    /// Watches `folder` and the folders inside it (8 deep) on the watcher's descriptor: for a worker thread (inotify
    /// descriptors may be used from any thread). Returns the watches made, by descriptor.
    public static func placeWatches(descriptor: Int32, folder: String) -> [Int32: String] {
        var placed: [Int32: String] = [:]
        func add(_ folder: String, depth: Int) {
            let watch = inotify_add_watch(descriptor, folder, fileEvents | folderEvents)
            guard watch >= 0 else { return }
            placed[watch] = folder
            guard depth < 8, let names = try? Folder.folderNames(in: folder) else { return }
            for name in names { add("\(folder)/\(name)", depth: depth + 1) }
        }
        add(folder, depth: 0)
        return placed
    }

    /// Takes the watches a worker placed for `category` when it is still the one watched; watches of folders no
    /// longer in it are dropped. Returns what the events that came meanwhile said.
    public func adopt(_ watches: [Int32: String], for category: LibraryCategory, now: Double) -> Changes {
        var changes = Changes()
        guard let active, active.path == category.path, !active.isRoot else {
            // Watches for a category the show has left: nobody wants their events.
            for watch in watches.keys where categoryWatches[watch] == nil { inotify_rm_watch(descriptor, watch) }
            return changes
        }
        for watch in categoryWatches.keys where watches[watch] == nil { inotify_rm_watch(descriptor, watch) }
        categoryWatches = watches
        let replay = unclaimed
        unclaimed = []
        for (event, name) in replay where watches[event.wd] != nil {
            apply(event, name: name, now: now, creator: nil, to: &changes)
        }
        return changes
    }

    /// Watches placed by a job that was cancelled: dropped unless they are in use.
    public func dropStrays(_ watches: [Int32]) {
        for watch in watches where categoryWatches[watch] == nil && watch != rootWatch && watch != parentWatch {
            inotify_rm_watch(descriptor, watch)
        }
    }

    /// Names created and never opened, waiting since `settleSeconds` before `now`: links, complete as they came.
    public func settle(now: Double) -> Changes {
        var changes = Changes()
        for (path, entry) in created where now - entry.time >= Self.settleSeconds - 0.000_1 {
            created[path] = nil
            guard beingWritten.remove(path) != nil else { continue }
            arrived(path, inRoot: entry.inRoot, gone: false, finished: true, to: &changes)
        }
        return changes
    }

    /// A photo known to be complete (the player put it there itself): no longer waited for.
    public func completed(_ path: String) -> Changes {
        var changes = Changes()
        let entry = created.removeValue(forKey: path)
        guard beingWritten.remove(path) != nil else { return changes }
        arrived(
            path, inRoot: entry?.inRoot ?? (PathText.directory(of: path) == root), gone: false, finished: true,
            to: &changes)
        return changes
    }

    /// Reads what happened since the last call.
    public func read(now: Double = MonotonicClock.seconds()) -> Changes {
        var changes = Changes()
        InotifyEvents.read(descriptor, bufferBytes: 64 * 1024) { event, name in
            let creator = justCreated
            justCreated = nil
            apply(event, name: name, now: now, creator: creator, to: &changes)
        }
        return changes
    }

    private func apply(
        _ event: inotify_event, name: String, now: Double, creator: String?, to changes: inout Changes
    ) {
        let mask = event.mask
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            // Events were lost, so nothing the watcher tracks can be trusted: the watches are made again (folders
            // may have come and gone unseen) and files thought still open are taken as closed (a close was maybe
            // among the lost events; one still being written is announced again when it is closed).
            changes.overflowed = true
            beingWritten = []
            created = [:]
            unclaimed = []
            followsWanted.insert(.overflow)
            // The category's watches are placed anew by the rescan's index job, off this thread.
            return
        }
        let isFolder = mask & UInt32(IN_ISDIR) != 0
        if mask & UInt32(IN_OPEN) != 0 && (isFolder || creator == nil) {
            // Opens change nothing, and the player's own make plenty (the lister opening the root, the index a
            // category's folders and every photo's header): taken as changes, each read would ask for the next and
            // the idle player would spin (seen: a whole core). Only the open(2) that created a file says something
            // (the file is being written, not linked), and that one comes right after its IN_CREATE.
            return
        }
        if event.wd == parentWatch {
            if name == rootName { followsWanted.insert(.appeared) }
            return
        }
        let folder: String
        let inRoot = event.wd == rootWatch
        if inRoot && mask & UInt32(IN_IGNORED | IN_UNMOUNT) != 0 {
            // The folder is gone (deleted, or its filesystem unmounted: a USB stick pulled) and so is its watch:
            // another folder may be in its place already, else the library is missing.
            rootWatch = -1
            followsWanted.insert(.gone)
            changes.categoriesChanged = true
            return
        }
        if inRoot && mask & Self.folderEvents != 0 {
            // Renamed away, maybe with another folder already in its place (rename(2) over an empty folder).
            followsWanted.insert(.gone)
        }
        if inRoot {
            folder = root
            if mask & Self.folderEvents != 0 || isFolder {
                changes.categoriesChanged = true
                return
            }
        } else if let watched = categoryWatches[event.wd] {
            folder = watched
            if mask & Self.folderEvents != 0 {
                changes.activeChanged = true
                return
            }
        } else {
            // A watch a worker placed and has not handed over yet (or one just dropped): kept for `adopt`.
            if active?.isRoot == false {
                if unclaimed.count < Self.unclaimedLimit {
                    unclaimed.append((event, name))
                } else {
                    changes.overflowed = true
                    unclaimed = []
                }
            }
            return
        }
        let path = "\(folder)/\(name)"
        if isFolder {
            // A new folder is watched by the refresh this asks for (its index job places the watches again).
            changes.activeChanged = true
            return
        }
        guard Library.isPhotoName(name) else { return }
        if mask & UInt32(IN_OPEN) != 0 {
            // Opened as it was created: a file being written, announced when it is closed. Any other open (the
            // player's own reads among them) says nothing.
            if creator == path { created[path] = nil }
            return
        }
        if mask & UInt32(IN_CREATE) != 0 {
            beingWritten.insert(path)
            created[path] = (now, inRoot)
            justCreated = path
            return
        }
        created[path] = nil
        beingWritten.remove(path)
        let gone = mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0
        arrived(
            path, inRoot: inRoot, gone: gone, finished: mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0, to: &changes)
    }

    /// A photo name arrived complete or went.
    private func arrived(_ path: String, inRoot: Bool, gone: Bool, finished: Bool, to changes: inout Changes) {
        if inRoot {
            // Photos directly in the root form the root category; they matter when it is the active one, and
            // the first or last of them makes that category appear or go.
            if gone {
                changes.rootPhotoWent = true
            } else {
                changes.rootPhotoArrived = true
            }
            if !activeIsRoot { return }
        }
        changes.activeChanged = true
        if finished { changes.finished.insert(path) }
    }
}
