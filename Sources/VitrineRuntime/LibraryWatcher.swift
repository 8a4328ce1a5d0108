import CLinux
import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// inotify on the library root (categories appearing and going) and on the active category's folders (photos
/// arriving and going). Only finished files count: a file is announced when it is closed after writing or moved
/// in, never while it is being written.
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

    public let descriptor: Int32
    public let root: String
    private var rootWatch: Int32 = -1
    /// The folder holding the library: tells when a folder of the library's name appears there again.
    private var parentWatch: Int32 = -1
    private let rootName: String
    private var categoryWatches: [Int32: String] = [:]
    private var activeIsRoot = false
    /// Files created and not yet closed: never indexed until they are.
    public private(set) var beingWritten: Set<String> = []

    static let fileEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE)
    static let folderEvents = UInt32(IN_DELETE_SELF | IN_MOVE_SELF)

    /// The library folder is not there (a USB stick or a NAS not mounted yet, a folder not made yet): the caller
    /// asks `lookForRoot` now and then, since a mount brings no inotify event.
    public private(set) var rootMissing = false
    private var active: LibraryCategory?

    public init(root: String) throws(RuntimeError) {
        self.root = root
        rootName = root.split(separator: "/").last.map(String.init) ?? root
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw .last("start inotify") }
        rootWatch = inotify_add_watch(descriptor, root, Self.fileEvents | Self.folderEvents)
        if rootWatch < 0 {
            let failure = RuntimeError.last("watch the library", path: root)
            guard failure.errno == ENOENT || failure.errno == ENOTDIR else {
                close(descriptor)
                throw failure
            }
            rootMissing = true
        }
        // Without the parent (unreadable, or the root is "/") a replaced library is noticed only on a restart.
        parentWatch = inotify_add_watch(
            descriptor, FileBytes.directory(of: root), UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR))
    }

    /// Points the root watch at whatever folder now has the library's name; true when that is a new folder.
    private func followRoot() -> Bool {
        let watch = inotify_add_watch(descriptor, root, Self.fileEvents | Self.folderEvents)
        guard watch >= 0, watch != rootWatch else { return false }
        if rootWatch >= 0 { inotify_rm_watch(descriptor, rootWatch) }
        rootWatch = watch
        rootMissing = false
        return true
    }

    /// While the library is missing: whether it is there now (then it is watched, and everything must be read).
    public func lookForRoot() -> Bool {
        rootMissing && followRoot()
    }

    deinit { close(descriptor) }

    /// A symbolic link or a new hard link to an existing file (`ln`, `cp -l`, rsync `--link-dest`): it is complete
    /// when it appears and is never opened for writing, so no close will announce it.
    static func isLink(_ path: String) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0 else { return false }
        return status.st_mode & S_IFMT == S_IFLNK || status.st_nlink > 1
    }

    /// Watches `category` (and the folders inside it) instead of the previous one.
    public func watch(_ category: LibraryCategory) {
        active = category
        for watch in categoryWatches.keys { inotify_rm_watch(descriptor, watch) }
        categoryWatches = [:]
        activeIsRoot = category.isRoot
        guard !category.isRoot else { return }
        addWatches(category.path, depth: 0)
    }

    private func addWatches(_ folder: String, depth: Int) {
        let watch = inotify_add_watch(descriptor, folder, Self.fileEvents | Self.folderEvents)
        guard watch >= 0 else { return }
        categoryWatches[watch] = folder
        guard depth < 8, let names = try? Library.folderNames(in: folder) else { return }
        for name in names { addWatches("\(folder)/\(name)", depth: depth + 1) }
    }

    /// Reads what happened since the last call.
    public func read() -> Changes {
        var changes = Changes()
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = Glibc.read(descriptor, buffer, capacity)
            guard count > 0 else { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameBytes = Int(event.len)
                let nameStart = buffer.advanced(by: offset + MemoryLayout<inotify_event>.size)
                let name = String(
                    decoding: UnsafeRawBufferPointer(start: nameStart, count: nameBytes).prefix { $0 != 0 },
                    as: UTF8.self)
                offset += MemoryLayout<inotify_event>.size + nameBytes
                apply(event, name: name, to: &changes)
            }
        }
        return changes
    }

    private func apply(_ event: inotify_event, name: String, to changes: inout Changes) {
        let mask = event.mask
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            // Events were lost, so nothing the watcher tracks can be trusted: the watches are made again (folders
            // may have come and gone unseen) and files thought still open are taken as closed (a close was maybe
            // among the lost events; one still being written is announced again when it is closed).
            changes.overflowed = true
            beingWritten = []
            _ = followRoot()
            if let active { watch(active) }
            return
        }
        let isFolder = mask & UInt32(IN_ISDIR) != 0
        if event.wd == parentWatch {
            if name == rootName && followRoot() { changes.rootReplaced = true }
            return
        }
        let folder: String
        let inRoot = event.wd == rootWatch
        if inRoot && mask & UInt32(IN_IGNORED | IN_UNMOUNT) != 0 {
            // The folder is gone (deleted, or its filesystem unmounted: a USB stick pulled) and so is its watch.
            if !followRoot() {
                rootWatch = -1
                rootMissing = true
            }
            changes.categoriesChanged = true
            return
        }
        if inRoot && mask & Self.folderEvents != 0 && followRoot() {
            // Renamed away with another folder already in its place (rename(2) over an empty folder).
            changes.rootReplaced = true
            return
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
            return
        }
        let path = "\(folder)/\(name)"
        if isFolder {
            if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 { addWatches(path, depth: 1) }
            changes.activeChanged = true
            return
        }
        guard Library.isPhotoName(name) else { return }
        if mask & UInt32(IN_CREATE) != 0 && !Self.isLink(path) {
            beingWritten.insert(path)
            return
        }
        beingWritten.remove(path)
        if inRoot {
            // Photos directly in the root form the root category; they matter when it is the active one, and
            // the first or last of them makes that category appear or go.
            if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                changes.rootPhotoWent = true
            } else {
                changes.rootPhotoArrived = true
            }
            if !activeIsRoot { return }
        }
        changes.activeChanged = true
        if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE) != 0 { changes.finished.insert(path) }
    }
}
