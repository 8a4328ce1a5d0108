#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A folder's entries, read with opendir/readdir: names and kinds, never a file's content.
public enum Folder {
    /// The visible entry names of `folder`, files and folders.
    public static func entryNames(in folder: String) throws(FileError) -> [String] {
        try entries(in: folder).map(\.name)
    }

    /// The hidden (dot) file names of `folder`: what the library never shows, for the tools that tidy it.
    public static func hiddenFileNames(in folder: String) throws(FileError) -> [String] {
        var names: [String] = []
        try forEachEntry(folder, hidden: true) { name, _, isRegularFile in if isRegularFile { names.append(name) } }
        return names
    }

    /// The visible subfolder names of `folder`.
    public static func folderNames(in folder: String) throws(FileError) -> [String] {
        try entries(in: folder).filter(\.isDirectory).map(\.name)
    }

    public struct Entry: Sendable {
        public var name: String
        public var isDirectory: Bool
        /// Only regular files are photos: a FIFO or a device named `x.jpg` would block whoever reads it.
        public var isRegularFile: Bool
    }

    /// The visible entries of a folder.
    public static func entries(in folder: String) throws(FileError) -> [Entry] {
        var entries: [Entry] = []
        try forEachEntry(folder) { name, isDirectory, isRegularFile in
            entries.append(Entry(name: name, isDirectory: isDirectory, isRegularFile: isRegularFile))
        }
        return entries
    }

    /// Each visible entry of a folder, one at a time. Hidden entries are skipped here so hidden folders (`.sync`,
    /// `.Trash`) are never indexed.
    public static func forEachEntry(
        _ folder: String, hidden: Bool = false,
        _ body: (_ name: String, _ isDirectory: Bool, _ isRegularFile: Bool) -> Void
    ) throws(FileError) {
        guard let directory = opendir(folder) else {
            throw FileError(path: folder, operation: "open folder", errno: errno)
        }
        defer { closedir(directory) }
        while let pointer = readdir(directory) {
            let (name, type) = FileBytes.entry(pointer)
            if name.hasPrefix(".") != hidden || name == "." || name == ".." { continue }
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
