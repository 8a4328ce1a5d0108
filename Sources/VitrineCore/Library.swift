#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A photo library folder: its subfolders are categories, photos directly in it form one more category.
///
/// Only names are read here (no photo is opened), so indexing a category stays cheap; nothing is cached, so an
/// inactive category costs no memory.
public struct Library: Sendable {
    public var root: String

    /// Subfolders nested deeper than this are not followed (a symlink loop must not hang the indexer).
    static let maximumDepth = 8

    public init(root: String) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
    }

    /// Whether a file name is a photo the library shows. Hidden files, partial downloads and editor backups are
    /// skipped: they are either not the user's photos or not finished yet.
    public static func isPhotoName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, first != UInt8(ascii: "."), bytes.last != UInt8(ascii: "~") else { return false }
        for partial in partialSuffixes where hasSuffix(bytes, partial) { return false }
        for suffix in photoSuffixes where hasSuffix(bytes, suffix) { return true }
        return false
    }

    /// What phones, cameras, screenshots and browsers name their pictures; the content decides the format.
    private static let photoSuffixes: [StaticString] = [
        ".jpg", ".jpeg", ".png", ".webp", ".heic", ".heif", ".hif", ".avif",
    ]
    private static let partialSuffixes: [StaticString] = [".part", ".tmp", ".crdownload", ".partial", ".download"]

    /// Whether `bytes` ends with `suffix` (lowercase ASCII), ignoring ASCII case: no lowercased copy of the name,
    /// which a listing of 100,000 files would make 100,000 times.
    private static func hasSuffix(_ bytes: String.UTF8View, _ suffix: StaticString) -> Bool {
        let count = suffix.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        return suffix.withUTF8Buffer { wanted in
            zip(bytes.suffix(count), wanted).allSatisfy { byte, lower in
                (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte) == lower
            }
        }
    }

    /// Splits `NAME@WxH.jpg` into `NAME` and the size; nil for a plain photo name.
    public static func renditionParts(of fileName: String) -> (name: String, size: Size)? {
        guard let dot = fileName.lastIndex(of: "."), let at = fileName[..<dot].lastIndex(of: "@") else { return nil }
        let name = fileName[..<at]
        guard !name.isEmpty, let size = Size(parsing: fileName[fileName.index(after: at)..<dot]) else { return nil }
        return (String(name), size)
    }

    /// The photo file names directly in `folder`, in natural order; fails when it is not a folder.
    public static func photoNames(in folder: String) throws(FileError) -> [String] {
        try list(folder).filter { $0.isRegularFile && isPhotoName($0.name) }.map(\.name).sorted(by: NaturalOrder.less)
    }

    /// The visible entry names of `folder`, files and folders.
    public static func entryNames(in folder: String) throws(FileError) -> [String] {
        try list(folder).map(\.name)
    }

    /// The visible subfolder names of `folder`.
    public static func folderNames(in folder: String) throws(FileError) -> [String] {
        try list(folder).filter(\.isDirectory).map(\.name)
    }

    /// The categories, in natural order of their names, with the root category first when it holds photos.
    public func categories() throws(FileError) -> [LibraryCategory] {
        var found: [LibraryCategory] = []
        var rootHasPhotos = false
        // A flat library has its photos in the root: this runs on the player's thread whenever one arrives, so
        // the entries are looked at one by one and names only until the first photo.
        try Self.forEachEntry(root) { name, isDirectory, isRegularFile in
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
        try Self.forEachEntry(folder) { name, isDirectory, isRegularFile in
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

    struct Entry {
        var name: String
        var isDirectory: Bool
        /// Only regular files are photos: a FIFO or a device named `x.jpg` would block whoever reads it.
        var isRegularFile: Bool
    }

    /// The visible entries of a folder.
    static func list(_ folder: String) throws(FileError) -> [Entry] {
        var entries: [Entry] = []
        try forEachEntry(folder) { name, isDirectory, isRegularFile in
            entries.append(Entry(name: name, isDirectory: isDirectory, isRegularFile: isRegularFile))
        }
        return entries
    }

    /// Each visible entry of a folder, one at a time. Hidden entries are skipped here so hidden folders (`.sync`,
    /// `.Trash`) are never indexed.
    static func forEachEntry(
        _ folder: String, _ body: (_ name: String, _ isDirectory: Bool, _ isRegularFile: Bool) -> Void
    ) throws(FileError) {
        guard let directory = opendir(folder) else {
            throw FileError(path: folder, operation: "open folder", errno: errno)
        }
        defer { closedir(directory) }
        while let pointer = readdir(directory) {
            let (name, type) = FileBytes.entry(pointer)
            if name.hasPrefix(".") { continue }
            var isDirectory = type == UInt8(DT_DIR)
            var isRegularFile = type == UInt8(DT_REG)
            // Symbolic links (a flipped `current`, cp -s) and filesystems without d_type are asked about their
            // target.
            if type == UInt8(DT_UNKNOWN) || type == UInt8(DT_LNK) {
                var status = stat()
                if stat("\(folder)/\(name)", &status) == 0 {
                    isDirectory = status.st_mode & S_IFMT == S_IFDIR
                    isRegularFile = status.st_mode & S_IFMT == S_IFREG
                }
            }
            body(name, isDirectory, isRegularFile)
        }
    }
}
