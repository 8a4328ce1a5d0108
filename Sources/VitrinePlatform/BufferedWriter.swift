import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes a new file through a 64 KiB buffer and renames it into place when finished, so a reader never sees half
/// a file and a large file is never held whole. A write that fails is remembered and reported by `finish`.
package final class BufferedWriter {
    let path: String
    /// The file being written; nil once finished.
    private var file: Descriptor?
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var failure: FileError?
    static let chunk = 64 << 10

    package init(path: String) throws(FileError) {
        self.path = path
        let file = Descriptor(taking: open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644))
        descriptor = file.number
        guard descriptor >= 0 else { throw FileError(path: path, operation: "create", errno: errno) }
        self.file = .some(file)
        buffer.reserveCapacity(Self.chunk)
    }

    deinit {
        // Never finished: the half-written file goes with its descriptor.
        if file != nil { unlink(path) }
    }

    package func append(_ bytes: ArraySlice<UInt8>) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.chunk { flush() }
    }

    private func flush() {
        var written = 0
        while written < buffer.count, failure == nil {
            let count = buffer.withUnsafeBytes { raw in
                write(descriptor, raw.baseAddress.map { $0 + written }, buffer.count - written)
            }
            if count < 0 {
                if errno == EINTR { continue }
                failure = FileError(path: path, operation: "write", errno: errno)
            } else {
                written += count
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes, closes and renames the file to `destination`; the error when any step failed (the new file is
    /// then removed and `destination` left as it was).
    /// The file is on the disk before it takes the name, and the name after: a power cut leaves the old file or the
    /// new one, never a short one.
    package func finish(renamingTo destination: String) -> FileError? {
        flush()
        if failure == nil, file != nil, fsync(descriptor) != 0 {
            failure = FileError(path: path, operation: "write", errno: errno)
        }
        if let closeError = file.take()?.closeReportingError(), failure == nil {
            failure = FileError(path: path, operation: "write", errno: closeError)
        }
        if failure == nil, rename(path, destination) != 0 {
            failure = FileError(path: destination, operation: "rename into place", errno: errno)
        }
        if failure != nil { unlink(path) }
        if failure == nil, let folderFailure = FileBytes.syncFolder(of: destination) {
            failure = FileError(path: destination, operation: "sync its folder", errno: folderFailure)
        }
        return failure
    }
}
