import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One sync of one source into the library: the whole remote folder is listed first, then the plan is made
/// against the manifest, then files are moved, deleted and fetched. Nothing is deleted unless every folder was
/// listed: a listing cut short must not look like photos removed.
///
/// Runs in `vitrine sync`'s own process, never in the player's (see `SyncCommand`).
public final class SyncEngine {
    public struct Progress: Sendable, Equatable {
        public enum Phase: Sendable, Equatable {
            case listing(folders: Int)
            case fetching(done: Int, total: Int)
        }
        public var phase: Phase
        public var bytes: Int64

        /// The listing is done and fetching starts: said even when progress is thinned out.
        public var isFirstFetch: Bool {
            if case .fetching(0, _) = phase { return true }
            return false
        }
    }

    public struct Summary: Sendable, Equatable {
        /// The counts, as the player hears them (`conflicts` and `skipped` counted when the sync ends).
        public var tally = SyncTally()
        /// Remote files whose cache path is held by the user's own file.
        public var conflicts: [SyncPlan.Download] = []
        /// Files passed over this time, each with why (a bad answer for that file alone, a name the cache cannot
        /// take, no size in the listing).
        public var skipped: [String] = []
        /// Photos kept as they are where a rendition was asked for, each with why (a file no decoder takes).
        public var notes: [String] = []
    }

    /// Folder levels followed below the source's folder: the library's own limit for a category's nested folders.
    static let maximumDepth = 8
    static let maximumFolders = 20_000
    static let maximumFiles = 1_000_000
    /// The manifest is saved at least this often while files arrive, so a sync killed midway keeps what it fetched.
    static let saveSeconds: Double = 5

    private let source: SourceSettings
    private let libraryRoot: String
    private let adapterMaker: () throws(SyncError) -> SourceAdapter
    private let renditions: CacheRenditions?

    /// `rendition`: the device profile's rendition canvas and fit, to keep each photo's rendition instead of it.
    public init(
        source: SourceSettings, libraryRoot: String, rendition: (canvas: Size, fit: Fit)? = nil,
        maxMegapixels: Double = 1000
    ) {
        self.source = source
        renditions = rendition.map { CacheRenditions(canvas: $0.canvas, fit: $0.fit, maxMegapixels: maxMegapixels) }
        self.libraryRoot =
            libraryRoot.count > 1 && libraryRoot.hasSuffix("/") ? String(libraryRoot.dropLast()) : libraryRoot
        self.adapterMaker = { () throws(SyncError) -> SourceAdapter in
            let login = try Self.login(for: source)
            switch source.kind {
            case .webdav: return try WebDAVAdapter(source: source, login: login)
            case .smb: return try SMBAdapter(source: source, login: login)
            }
        }
    }

    /// The source's login, from its credentials file (refused when others can read it).
    public static func login(for source: SourceSettings) throws(SyncError) -> LoginFile? {
        guard let path = source.credentialsFile else { return nil }
        do {
            return try LoginFile.load(path)
        } catch {
            throw SyncError(.settings, "credentials file \(path)", error.message, errno: error.errno ?? 0)
        }
    }

    var stateFolder: String { "\(libraryRoot)/.vitrine-sources" }
    var manifestPath: String { "\(stateFolder)/\(source.name).tsv" }

    public func run(progress: (Progress) -> Void) throws(SyncError) -> Summary {
        do {
            try FileBytes.createDirectories(stateFolder)
        } catch {
            let hint =
                error.errno == EROFS || error.errno == EACCES
                ? " (the player may not write the library: as a service, install with deploy/install.sh "
                    + "--sources, or give the unit ReadWritePaths= for it and the vitrine user write access)"
                : ""
            throw SyncError(
                .local, error.path, "cannot make the sync's folder in the library\(hint)", errno: error.errno)
        }
        let lock = try lockSource()
        let result: Result<Summary, SyncError>
        do {
            result = .success(try runLocked(progress: progress))
        } catch {
            result = .failure(error)
        }
        lock.close()
        return try result.get()
    }

    private func runLocked(progress: (Progress) -> Void) throws(SyncError) -> Summary {
        let adapter = try adapterMaker()
        var summary = Summary()
        let remote = try walk(adapter, summary: &summary, progress: progress)
        summary.tally.listed = remote.count
        var manifest = readManifest(summary: &summary)
        var plan = SyncPlan.make(
            remote: remote, manifest: manifest, source: source, exists: exists)
        plan = adopt(plan, manifest: &manifest)
        if let limit = source.cacheLimitMiB { plan.apply(limit: Int64(limit) << 20) }
        summary.tally.notFitting = plan.notFitting
        summary.conflicts = plan.conflicts
        summary.tally.kept = plan.kept.count
        var owned = manifest.entries.reduce(into: [String: SyncManifest.Entry]()) { $0[$1.local] = $1 }
        for entry in plan.kept { owned[entry.local] = entry }
        for move in plan.moves where moveFile(move.from.local, to: move.to.local, summary: &summary) {
            owned[move.from.local] = nil
            owned[move.to.local] = move.to
            summary.tally.moved += 1
        }
        for entry in plan.deletions {
            if unlink(path(entry.local)) == 0 || errno == ENOENT {
                owned[entry.local] = nil
                summary.tally.deleted += 1
                removeEmptyFolders(above: entry.local)
            } else {
                summary.skipped.append("\(entry.local): cannot delete it (\(String(cString: strerror(errno))))")
            }
        }
        try save(owned)
        var lastSave = MonotonicClock.seconds()
        progress(Progress(phase: .fetching(done: 0, total: plan.downloads.count), bytes: 0))
        defer { removeStaleParts(keeping: Set(plan.downloads.map(\.local)), in: owned.keys) }
        for (index, download) in plan.downloads.enumerated() {
            do {
                let placed = try fetch(download, adapter: adapter, summary: &summary)
                if let old = download.replaces, old.local != placed.local {
                    // A changed photo whose rendition took another size: the old one goes.
                    unlink(path(old.local))
                    owned[old.local] = nil
                }
                owned[placed.local] = SyncManifest.Entry(
                    local: placed.local, remote: download.file, localSize: placed.size)
                summary.tally.fetched += 1
            } catch let error where error.kind == .badAnswer {
                summary.skipped.append("\(download.local): \(error)")
            } catch {
                try? save(owned)
                throw error
            }
            progress(
                Progress(phase: .fetching(done: index + 1, total: plan.downloads.count), bytes: summary.tally.bytes))
            if MonotonicClock.seconds() - lastSave >= Self.saveSeconds {
                try save(owned)
                lastSave = MonotonicClock.seconds()
            }
        }
        try save(owned)
        return summary
    }

    // MARK: Listing

    private func walk(_ adapter: SourceAdapter, summary: inout Summary, progress: (Progress) -> Void)
        throws(SyncError) -> [RemoteFile]
    {
        var files: [RemoteFile] = []
        var queue: [[String]] = [[]]
        var folders = 0
        while folders < queue.count {
            let folder = queue[folders]
            folders += 1
            guard folders <= Self.maximumFolders else {
                throw SyncError(
                    .badAnswer, source.location.description, "has more than \(Self.maximumFolders) folders")
            }
            for entry in try adapter.list(folder) where !RemoteName.isSkipped(entry.name) {
                let path = folder + [entry.name]
                if entry.isFolder {
                    // Subfolder categories start one level down: their nesting is counted from there.
                    let depth = source.filing == .subfolders ? path.count - 1 : path.count
                    if depth <= Self.maximumDepth { queue.append(path) }
                } else if Library.isPhotoName(entry.name) {
                    guard let size = entry.size else {
                        summary.skipped.append("\(path.joined(separator: "/")): the listing gives no size")
                        continue
                    }
                    files.append(RemoteFile(path: path, size: size, modified: entry.modified, etag: entry.etag))
                    guard files.count <= Self.maximumFiles else {
                        throw SyncError(
                            .badAnswer, source.location.description, "has more than \(Self.maximumFiles) photos")
                    }
                }
            }
            progress(Progress(phase: .listing(folders: folders), bytes: 0))
        }
        return files
    }

    // MARK: The cache

    private func path(_ local: String) -> String { "\(libraryRoot)/\(local)" }

    private func exists(_ local: String) -> Bool {
        var status = stat()
        return lstat(path(local), &status) == 0
    }

    /// A cache file there but not in the manifest that is what the server has (same size and time: a sync killed
    /// between the rename and the manifest's save, or a manifest lost) is taken back, not called the user's.
    private func adopt(_ plan: SyncPlan, manifest: inout SyncManifest) -> SyncPlan {
        var plan = plan
        var conflicts: [SyncPlan.Download] = []
        for conflict in plan.conflicts {
            var status = stat()
            guard lstat(path(conflict.local), &status) == 0, status.st_mode & S_IFMT == S_IFREG,
                let modified = conflict.file.modified, Int64(status.st_mtim.tv_sec) == modified,
                Int64(status.st_size) == conflict.file.size
            else {
                conflicts.append(conflict)
                continue
            }
            let entry = SyncManifest.Entry(
                local: conflict.local, remote: conflict.file, localSize: Int64(status.st_size))
            manifest.entries.append(entry)
            plan.kept.append(entry)
        }
        plan.conflicts = conflicts
        return plan
    }

    /// One sync of a source at a time: the player's and a `vitrine sync --once` from cron would fetch the same
    /// files into the same names.
    private func lockSource() throws(SyncError) -> Descriptor {
        let lockPath = "\(stateFolder)/\(source.name).lock"
        let file = Descriptor(taking: open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644))
        guard file.number >= 0 else {
            throw SyncError(.local, lockPath, "cannot open the sync's lock", errno: errno)
        }
        guard flock(file.number, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno
            file.close()
            if failure == EWOULDBLOCK {
                throw SyncError(.local, source.name, "another sync of this source is running")
            }
            throw SyncError(.local, lockPath, "cannot lock the sync", errno: failure)
        }
        return file
    }

    private func readManifest(summary: inout Summary) -> SyncManifest {
        guard FileBytes.exists(manifestPath) else { return SyncManifest() }
        guard let text = try? FileBytes.readText(manifestPath), let manifest = SyncManifest.parse(text) else {
            // Its files are then the user's until found again (`adopt`): nothing is deleted on its word.
            summary.skipped.append("\(manifestPath): unreadable; the cache's files are matched by size and time")
            return SyncManifest()
        }
        return manifest
    }

    private func save(_ owned: [String: SyncManifest.Entry]) throws(SyncError) {
        let manifest = SyncManifest(entries: owned.values.sorted { $0.local < $1.local })
        do {
            try FileBytes.writeAtomically(Array(manifest.text().utf8), to: manifestPath, durable: true)
        } catch {
            throw SyncError(.local, manifestPath, "cannot save the sync's manifest", errno: error.errno)
        }
    }

    private func makeParent(of local: String) throws(SyncError) {
        let folder = PathText.directory(of: path(local))
        do {
            try FileBytes.createDirectories(folder)
        } catch {
            throw SyncError(.local, error.path, "cannot make the folder", errno: error.errno)
        }
    }

    private func moveFile(_ from: String, to: String, summary: inout Summary) -> Bool {
        do {
            try makeParent(of: to)
        } catch {
            summary.skipped.append("\(to): \(error)")
            return false
        }
        guard rename(path(from), path(to)) == 0 else {
            summary.skipped.append("\(from): cannot move it to \(to) (\(String(cString: strerror(errno))))")
            return false
        }
        removeEmptyFolders(above: from)
        return true
    }

    /// Folders a deletion or a move left empty go too, up to the category's (which the user may have made).
    private func removeEmptyFolders(above local: String) {
        var names = local.split(separator: "/").dropLast()
        while names.count > 1, rmdir(path(names.joined(separator: "/"))) == 0 { names.removeLast() }
    }

    /// `.NAME.vitrine-part` beside where NAME goes: hidden, so neither the player nor its watcher takes it for a
    /// photo, and on the same filesystem, so the rename into place is atomic.
    static func partName(of local: String) -> String {
        let folder = PathText.directory(of: local)
        let name = local.split(separator: "/").last.map(String.init) ?? local
        return "\(folder)/.\(name).vitrine-part"
    }

    /// Fetches into the part file, resuming what an earlier try left there, then flushes it to the disk and renames
    /// it into place with the server's time. Returns its size.
    private func fetch(_ download: SyncPlan.Download, adapter: SourceAdapter, summary: inout Summary)
        throws(SyncError) -> (local: String, size: Int64)
    {
        try makeParent(of: download.local)
        let part = path(Self.partName(of: download.local))
        let file = Descriptor(taking: open(part, O_RDWR | O_CREAT | O_CLOEXEC, 0o644))
        guard file.number >= 0 else { throw SyncError(.local, part, "cannot make the download's file", errno: errno) }
        var status = stat()
        guard fstat(file.number, &status) == 0 else { throw SyncError(.local, part, "cannot read it", errno: errno) }
        var offset = Int64(status.st_size)
        if offset > download.file.size {
            guard ftruncate(file.number, 0) == 0 else {
                throw SyncError(.local, part, "cannot empty it", errno: errno)
            }
            offset = 0
        }
        guard lseek(file.number, off_t(offset), SEEK_SET) == offset else {
            throw SyncError(.local, part, "cannot seek in it", errno: errno)
        }
        let size: Int64
        do {
            size = try adapter.fetch(download.file, into: file.number, from: offset)
        } catch {
            if error.kind == .badAnswer { unlink(part) }
            throw error
        }
        summary.tally.bytes += size - offset
        guard fsync(file.number) == 0 else { throw SyncError(.local, part, "cannot flush it", errno: errno) }
        if let modified = download.file.modified {
            var times = [timespec(tv_sec: Int(modified), tv_nsec: 0), timespec(tv_sec: Int(modified), tv_nsec: 0)]
            _ = futimens(file.number, &times)
        }
        file.close()
        if let renditions {
            do {
                if let made = try renditions.make(
                    from: part, original: path(download.local), modified: download.file.modified)
                {
                    unlink(part)
                    var written = stat()
                    let local = String(made.dropFirst(libraryRoot.count + 1))
                    return (local, stat(made, &written) == 0 ? Int64(written.st_size) : size)
                }
            } catch {
                summary.notes.append("\(download.local): kept as it is, no rendition: \(error)")
            }
        }
        guard rename(part, path(download.local)) == 0 else {
            throw SyncError(.local, path(download.local), "cannot rename the download into place", errno: errno)
        }
        return (download.local, size)
    }

    /// Part files whose photo is no longer wanted (gone from the server since a fetch was cut off).
    private func removeStaleParts(keeping pending: Set<String>, in owned: Dictionary<String, SyncManifest.Entry>.Keys) {
        let partsKept = Set(pending.map(Self.partName))
        var folders: Set<String> = []
        for local in owned { folders.insert(PathText.directory(of: local)) }
        for local in pending { folders.insert(PathText.directory(of: local)) }
        for folder in folders {
            guard let names = try? Folder.hiddenFileNames(in: path(folder)) else { continue }
            for name in names where name.hasSuffix(".vitrine-part") && !partsKept.contains("\(folder)/\(name)") {
                unlink(path("\(folder)/\(name)"))
            }
        }
    }
}
