#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A file mapped read-only into memory, with one owner who unmaps it exactly once, when the last reference goes.
/// Its pages are the page cache's: read as they are touched, shared by every process that maps the file and
/// dropped by the kernel under memory pressure like any clean file page, so a large index read a few pages at a
/// time costs next to nothing in resident memory.
///
/// The mapping is private and read-only: a file replaced by a rename leaves this one as it was; one truncated in
/// place underneath a reader would fault, so the files mapped are ones installed by renaming (the installer's
/// way), never written in place.
public final class MappedFile: @unchecked Sendable {
    // @unchecked: `bytes` is read-only memory, never written after init, unmapped only in deinit.
    public let path: String
    public let bytes: UnsafeRawBufferPointer

    /// `randomAccess` tells the kernel the pages are read in no order (a tree's), so a fault reads the page it needs
    /// rather than a readahead window around it.
    public init(path: String, randomAccess: Bool = false) throws(FileError) {
        let file = Descriptor(taking: open(path, O_RDONLY | O_CLOEXEC))
        guard file.number >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
        var status = stat()
        guard fstat(file.number, &status) == 0 else { throw FileError(path: path, operation: "stat", errno: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw FileError(path: path, operation: "map", errno: status.st_mode & S_IFMT == S_IFDIR ? EISDIR : EINVAL)
        }
        let count = Int(status.st_size)
        self.path = path
        // mmap refuses a length of 0; an empty file is an empty buffer, which its reader refuses by its own rules.
        guard count > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let address = mmap(nil, count, PROT_READ, MAP_PRIVATE, file.number, 0),
            address != UnsafeMutableRawPointer(bitPattern: -1)
        else {
            throw FileError(path: path, operation: "map", errno: errno)
        }
        bytes = UnsafeRawBufferPointer(start: address, count: count)
        if randomAccess { _ = madvise(address, count, MADV_RANDOM) }
        // The mapping keeps the file; the descriptor closes when `file` goes out of scope.
    }

    deinit {
        if let address = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: address), bytes.count) }
    }
}
