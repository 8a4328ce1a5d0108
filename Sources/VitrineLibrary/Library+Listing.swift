import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Only names are read here (no photo is opened), so indexing a category stays cheap; nothing is cached, so an
/// inactive category costs no memory.
extension Library {
    /// Subfolders nested deeper than this are not followed (a symlink loop must not hang the indexer).
    static let maximumDepth = 8

    /// The photo file names directly in `folder`, in natural order; fails when it is not a folder.
    public static func photoNames(in folder: String) throws(FileError) -> [String] {
        try Folder.entries(in: folder).filter { $0.isRegularFile && isPhotoName($0.name) }.map(\.name).sorted(
            by: NaturalOrder.less)
    }

    /// The categories, in natural order of their names, with the root category first when it holds photos.
    public func categories() throws(FileError) -> [LibraryCategory] {
        var found: [LibraryCategory] = []
        var rootHasPhotos = false
        // A flat library has its photos in the root: this runs on the player's thread whenever one arrives, so
        // the entries are looked at one by one and names only until the first photo.
        try Folder.forEachEntry(root) { name, isDirectory, isRegularFile in
            if isDirectory {
                found.append(LibraryCategory(name: name, path: "\(root)/\(name)"))
            } else if !rootHasPhotos, isRegularFile, Self.isPhotoName(name) {
                rootHasPhotos = true
            }
        }
        found.sort { NaturalOrder.less($0.name, $1.name) }
        if rootHasPhotos { found.insert(LibraryCategory(name: "", path: root), at: 0) }
        return found
    }

    /// The slides of one category, in natural order of their names. The root category holds only the root's own
    /// files; any other category includes its nested folders.
    public func slides(in category: LibraryCategory) throws(FileError) -> [Slide] {
        try catalog(of: category, isCancelled: { false })?.slides ?? []
    }

    /// The same, packed (see `SlideCatalog`), asking `isCancelled` before each folder is read; nil when it said
    /// yes. The names are gathered into one byte buffer and sorted there: a 100,000-photo folder never becomes
    /// 100,000 strings at once.
    /// Renditions made in the background are looked for in `renditionCache`, in folders mirroring the library's.
    public func catalog(of category: LibraryCategory, renditionCache: String? = nil, isCancelled: () -> Bool)
        throws(FileError) -> SlideCatalog?
    {
        var files = PhotoFileList()
        let depth = category.isRoot ? Self.maximumDepth : 0
        guard try collect(folder: category.path, prefix: [], depth: depth, into: &files, isCancelled: isCancelled)
        else { return nil }
        let mirror = renditionCache.map { $0 + String(category.path.dropFirst(root.count)) }
        // A cache not made yet (or gone) has nothing to add.
        if let mirror, FileBytes.exists(mirror) {
            guard
                (try? collect(
                    folder: mirror, prefix: [], depth: depth, into: &files, cached: true, isCancelled: isCancelled))
                    ?? true
            else { return nil }
        }
        return files.catalog(category: category, cacheFolder: mirror)
    }

    /// False when cancelled.
    private func collect(
        folder: String, prefix: [UInt8], depth: Int, into files: inout PhotoFileList, cached: Bool = false,
        isCancelled: () -> Bool
    ) throws(FileError) -> Bool {
        if isCancelled() { return false }
        var subfolders: [String] = []
        try Folder.forEachEntry(folder) { name, isDirectory, isRegularFile in
            if isDirectory {
                if depth < Self.maximumDepth { subfolders.append(name) }
            } else if isRegularFile, Self.isPhotoName(name) {
                files.add(prefix: prefix, fileName: name, cached: cached)
            }
        }
        for name in subfolders {
            guard
                try collect(
                    folder: "\(folder)/\(name)", prefix: prefix + Array(name.utf8) + [UInt8(ascii: "/")],
                    depth: depth + 1, into: &files, cached: cached, isCancelled: isCancelled)
            else { return false }
        }
        return true
    }
}
