/// What one sync does to the cache, worked out from the server's listing and the manifest before a byte is
/// fetched.
public struct SyncPlan: Sendable, Equatable {
    public struct Download: Sendable, Equatable {
        public var file: RemoteFile
        /// The cache file, from the library's root.
        public var local: String
        /// The manifest's entry this replaces (a photo changed on the server), if any.
        public var replaces: SyncManifest.Entry?
    }

    /// A photo renamed or moved on the server: its cache file is renamed, not fetched again.
    public struct Move: Sendable, Equatable {
        public var from: SyncManifest.Entry
        public var to: SyncManifest.Entry
    }

    /// Newest first, so a first sync shows this year's photos before last decade's.
    public var downloads: [Download] = []
    public var moves: [Move] = []
    /// Gone from the server, or pushed out by the cache's limit.
    public var deletions: [SyncManifest.Entry] = []
    public var kept: [SyncManifest.Entry] = []
    /// Photos on the server the cache's limit leaves out.
    public var notFitting = 0
    /// Remote files whose cache path is held by a file the source does not own (the user's own photo of the same
    /// name): left alone.
    public var conflicts: [Download] = []

    /// - Parameter exists: whether a cache path (from the library's root) is there now.
    ///
    /// The manifest's entries are matched by their remote path: a cache file may have another name than the
    /// photo on the server (a rendition, `NAME@WxH.jpg`). A download's `local` is the original's name; the engine
    /// may keep a rendition beside it instead.
    public static func make(
        remote: [RemoteFile], manifest: SyncManifest, source: SourceSettings, exists: (String) -> Bool
    ) -> SyncPlan {
        var plan = SyncPlan()
        var owned: [[String]: SyncManifest.Entry] = [:]
        var ownedLocals: Set<String> = []
        for entry in manifest.entries {
            owned[entry.remote.path] = entry
            ownedLocals.insert(entry.local)
        }
        var wanted: Set<[String]> = []
        var taken: Set<String> = []
        var fresh: [Download] = []
        for file in remote {
            let local = localPath(of: file.path, source: source)
            // Two remote names for one cache name (a category named like the source's own): the first wins.
            guard taken.insert(local).inserted else { continue }
            wanted.insert(file.path)
            if let entry = owned[file.path] {
                if SyncManifest.isUnchanged(entry, file), exists(entry.local) {
                    var kept = entry
                    kept.remote = file
                    plan.kept.append(kept)
                } else {
                    fresh.append(Download(file: file, local: local, replaces: entry))
                }
            } else if !ownedLocals.contains(local), exists(local) {
                plan.conflicts.append(Download(file: file, local: local, replaces: nil))
            } else {
                fresh.append(Download(file: file, local: local, replaces: nil))
            }
        }
        var gone = manifest.entries.filter { !wanted.contains($0.remote.path) }
        // A rename keeps a file's tag (or its size and time): the cache file is moved instead of fetched again.
        var downloads: [Download] = []
        for download in fresh {
            if download.replaces == nil,
                let index = gone.firstIndex(where: {
                    SyncManifest.isUnchanged($0, download.file) && ($0.remote.etag != nil || $0.remote.modified != nil)
                        && exists($0.local)
                })
            {
                let from = gone.remove(at: index)
                let to = SyncManifest.Entry(
                    local: movedLocal(from, to: download.local), remote: download.file,
                    localSize: from.localSize)
                plan.moves.append(Move(from: from, to: to))
            } else {
                downloads.append(download)
            }
        }
        plan.deletions = gone
        downloads.sort { ($0.file.modified ?? .min) > ($1.file.modified ?? .min) }
        plan.downloads = downloads
        return plan
    }

    /// Where a cache file goes when its photo was renamed to `original`: a rendition (a cache name other than the
    /// photo's own) keeps its size in its new name.
    static func movedLocal(_ entry: SyncManifest.Entry, to original: String) -> String {
        guard let name = entry.local.split(separator: "/").last.map(String.init), name != entry.remote.path.last,
            let parts = Library.renditionParts(of: name)
        else { return original }
        let folder = PathText.directory(of: original)
        let originalName = original.split(separator: "/").last.map(String.init) ?? original
        let renamed = RenditionPlan.fileName(original: originalName, size: parts.size)
        return folder == "." ? renamed : "\(folder)/\(renamed)"
    }

    /// Keeps the newest photos within `limit` bytes: older cache files go, newer downloads that do not fit are
    /// left out and counted. A download counts at its size on the server, a rendition's upper bound.
    public mutating func apply(limit: Int64) {
        enum Item {
            case kept(SyncManifest.Entry), moved(Move), download(Download)
        }
        var items: [(modified: Int64, size: Int64, item: Item)] = []
        for entry in kept { items.append((entry.remote.modified ?? .min, entry.localSize, .kept(entry))) }
        for move in moves { items.append((move.to.remote.modified ?? .min, move.to.localSize, .moved(move))) }
        for download in downloads {
            items.append((download.file.modified ?? .min, download.file.size, .download(download)))
        }
        items.sort { $0.modified > $1.modified }
        var total: Int64 = 0
        var keptNow: [SyncManifest.Entry] = []
        var movesNow: [Move] = []
        var downloadsNow: [Download] = []
        for (_, size, item) in items {
            let fits = total <= limit - size
            if fits { total += size }
            switch item {
            case .kept(let entry):
                if fits { keptNow.append(entry) } else { deletions.append(entry) }
            case .moved(let move):
                if fits { movesNow.append(move) } else { deletions.append(move.from) }
            case .download(let download):
                if fits {
                    downloadsNow.append(download)
                } else {
                    notFitting += 1
                    if let old = download.replaces { deletions.append(old) }
                }
            }
        }
        kept = keptNow
        moves = movesNow
        downloads = downloadsNow
    }

    /// The cache path of a remote file, from the library's root.
    public static func localPath(of remote: [String], source: SourceSettings) -> String {
        switch source.filing {
        case .category(let category): return ([category] + remote).joined(separator: "/")
        case .subfolders: return (remote.count == 1 ? [source.name] + remote : remote).joined(separator: "/")
        }
    }
}
