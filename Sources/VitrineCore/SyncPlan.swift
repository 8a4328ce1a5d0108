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

    /// - Parameters:
    ///   - exists: whether a cache path (from the library's root) is there now.
    ///   - renditionSize: the cache keeps `NAME@WxH.jpg` at this size instead of each original.
    public static func make(
        remote: [RemoteFile], manifest: SyncManifest, source: SourceSettings, renditionSize: Size? = nil,
        exists: (String) -> Bool
    ) -> SyncPlan {
        var plan = SyncPlan()
        var owned: [String: SyncManifest.Entry] = [:]
        for entry in manifest.entries { owned[entry.local] = entry }
        var wanted: Set<String> = []
        var fresh: [Download] = []
        for file in remote {
            let local = localPath(of: file.path, source: source, renditionSize: renditionSize)
            guard wanted.insert(local).inserted else { continue }
            if let entry = owned[local] {
                if SyncManifest.isUnchanged(entry, file), exists(local) {
                    var kept = entry
                    kept.remote = file
                    plan.kept.append(kept)
                } else {
                    fresh.append(Download(file: file, local: local, replaces: entry))
                }
            } else if exists(local) {
                plan.conflicts.append(Download(file: file, local: local, replaces: nil))
            } else {
                fresh.append(Download(file: file, local: local, replaces: nil))
            }
        }
        var gone = manifest.entries.filter { !wanted.contains($0.local) }
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
                let to = SyncManifest.Entry(local: download.local, remote: download.file, localSize: from.localSize)
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
    public static func localPath(of remote: [String], source: SourceSettings, renditionSize: Size? = nil) -> String {
        var names: [String]
        switch source.filing {
        case .category(let category): names = [category] + remote
        case .subfolders: names = remote.count == 1 ? [source.name] + remote : remote
        }
        if let renditionSize, let last = names.last {
            let stem = last.lastIndex(of: ".").map { String(last[..<$0]) } ?? last
            names[names.count - 1] = "\(stem)@\(renditionSize.width)x\(renditionSize.height).jpg"
        }
        return names.joined(separator: "/")
    }
}
