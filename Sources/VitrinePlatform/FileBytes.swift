import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reading files with plain POSIX calls: the player avoids Foundation, and reads must report errno.
public enum FileBytes {
    /// Files larger than this are refused before any allocation; no photo or config comes near it.
    public static let maximumSize = 1 << 30

    public static func read(_ path: String, limit: Int = maximumSize) throws(FileError) -> [UInt8] {
        let file = Descriptor(taking: open(path, O_RDONLY | O_CLOEXEC))
        let descriptor = file.number
        guard descriptor >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
        // `file` closes it when this returns (a noncopyable value lives to the end of its scope).
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw FileError(path: path, operation: "stat", errno: errno) }
        guard status.st_mode & S_IFMT != S_IFDIR else { throw FileError(path: path, operation: "read", errno: EISDIR) }
        let expected = Int(status.st_size)
        guard expected <= limit else { throw FileError(path: path, operation: "read", errno: EFBIG) }
        // Files under /proc report size 0: read those until end of file instead.
        var bytes = [UInt8](repeating: 0, count: expected > 0 ? expected : 4096)
        var filled = 0
        while true {
            if filled == bytes.count {
                guard expected == 0, bytes.count < limit else { break }
                bytes += [UInt8](repeating: 0, count: bytes.count)
            }
            let count = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress.map { $0 + filled }, buffer.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path, operation: "read", errno: errno)
            }
            if count == 0 { break }
            filled += count
        }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }

    public static func readText(_ path: String) throws(FileError) -> String {
        String(decoding: try read(path, limit: 16 << 20), as: UTF8.self)
    }

    /// Writes through a temporary name and renames it into place, so a reader never sees half a file. `durable`
    /// also flushes the data to the disk before the rename, so after a power cut the name holds the old file or
    /// the new one, whole (ext4's rename of a new file without fsync can leave it empty). `mode` is the new file's
    /// (less the umask), so a private file is never readable by others, not even under its temporary name.
    public static func writeAtomically(
        _ bytes: some Collection<UInt8>, to path: String, durable: Bool = false, mode: mode_t = 0o644
    ) throws(FileError) {
        let temporary = "\(path).tmp-\(getpid())"
        // A temporary file left by a crash would keep its own mode through O_TRUNC.
        unlink(temporary)
        let file = Descriptor(taking: open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode))
        let descriptor = file.number
        guard descriptor >= 0 else { throw FileError(path: temporary, operation: "create", errno: errno) }
        let contiguous = Array(bytes)
        var written = 0
        while written < contiguous.count {
            let count = contiguous.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress.map { $0 + written }, contiguous.count - written)
            }
            if count < 0 {
                if errno == EINTR { continue }
                let failure = errno
                file.close()
                unlink(temporary)
                throw FileError(path: path, operation: "write", errno: failure)
            }
            written += count
        }
        if durable && fsync(descriptor) != 0 {
            let failure = errno
            file.close()
            unlink(temporary)
            throw FileError(path: path, operation: "write", errno: failure)
        }
        if let failure = file.closeReportingError() {
            unlink(temporary)
            throw FileError(path: path, operation: "write", errno: failure)
        }
        if rename(temporary, path) != 0 {
            let failure = errno
            unlink(temporary)
            throw FileError(path: path, operation: "rename into place", errno: failure)
        }
        // The rename is the folder's change: until the folder is on the disk too, a power cut may bring back the
        // old name (or neither).
        if durable, let failure = syncFolder(of: path) {
            throw FileError(path: path, operation: "sync its folder", errno: failure)
        }
    }

    /// fsync of the folder that holds `path`, so a rename or a new name in it survives a power cut; the errno
    /// when that fails.
    public static func syncFolder(of path: String) -> Int32? {
        let folder = PathText.directory(of: path)
        let descriptor = Descriptor(taking: open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        guard descriptor.number >= 0 else { return errno }
        return fsync(descriptor.number) == 0 ? nil : errno
    }

    /// `mkdir -p`: creates the folder and any missing parents.
    public static func createDirectories(_ path: String, mode: mode_t = 0o755) throws(FileError) {
        var partial = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            partial += "/\(component)"
            if mkdir(partial, mode) != 0 && errno != EEXIST {
                throw FileError(path: partial, operation: "create folder", errno: errno)
            }
        }
    }

    public static func exists(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0
    }

    /// The name and `d_type` of a `readdir` entry. Read through the record's own bytes: glibc packs records to
    /// their name's length, so the last one in its buffer is shorter than `dirent`, and copying the whole struct
    /// (as `pointee.d_name` does) reads past the buffer's end.
    public static func entry(_ record: UnsafeMutablePointer<dirent>) -> (name: String, type: UInt8) {
        let raw = UnsafeRawPointer(record)
        // Stored fields of an imported C struct always have an offset; the fallbacks are glibc's x86_64/aarch64 ones.
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
        let typeOffset = MemoryLayout<dirent>.offset(of: \dirent.d_type) ?? 18
        let name = String(cString: (raw + nameOffset).assumingMemoryBound(to: CChar.self))
        return (name, raw.load(fromByteOffset: typeOffset, as: UInt8.self))
    }
}
