import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An open photo file. Reads are positioned (`pread`), so the header can be read segment by segment without
/// loading the file.
struct PhotoFile: ~Copyable {
    let path: String
    private let owned: Descriptor
    var descriptor: Int32 { owned.number }
    let byteCount: Int
    /// The file's modification time in nanoseconds: with its size, whether a file is the one seen before.
    let modified: Int

    init(path: String) throws(ImageError) {
        self.path = path
        // O_NONBLOCK: a FIFO put where a photo was would otherwise block the open until a writer came; regular
        // files ignore the flag. The fstat below then refuses anything that is not a regular file.
        owned = Descriptor(taking: open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK))
        guard owned.number >= 0 else {
            throw ImageError(file: path, reason: .unreadable(FileError(path: path, operation: "open", errno: errno)))
        }
        var status = stat()
        guard fstat(owned.number, &status) == 0 else {
            let failure = errno
            throw ImageError(file: path, reason: .unreadable(FileError(path: path, operation: "stat", errno: failure)))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw ImageError(file: path, reason: .notRegularFile(Self.kind(status.st_mode)))
        }
        byteCount = Int(status.st_size)
        modified = Int(status.st_mtim.tv_sec) &* 1_000_000_000 &+ Int(status.st_mtim.tv_nsec)
    }

    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: return "a folder"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return "mode \(String(mode & S_IFMT, radix: 8))"
        }
    }

    /// Up to `count` bytes from `offset`; fewer at the end of the file.
    func read(offset: Int, count: Int) throws(ImageError) -> [UInt8] {
        let available = max(0, min(count, byteCount - offset))
        guard available > 0 else { return [] }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: available, alignment: 1)
        defer { buffer.deallocate() }
        let filled = try readFully(into: buffer, offset: offset)
        return Array(buffer.prefix(filled))
    }

    /// Fills `buffer` from `offset`, returning how many bytes the file had.
    func readFully(into buffer: UnsafeMutableRawBufferPointer, offset: Int) throws(ImageError) -> Int {
        var filled = 0
        while filled < buffer.count {
            guard let base = buffer.baseAddress else { break }
            let count = pread(descriptor, base + filled, buffer.count - filled, off_t(offset + filled))
            if count < 0 {
                if errno == EINTR { continue }
                throw ImageError(
                    file: path, reason: .unreadable(FileError(path: path, operation: "read", errno: errno)))
            }
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    func header() throws(ImageError) -> ImageHeader {
        let (path, descriptor, byteCount) = (path, descriptor, byteCount)
        return try ImageHeader.parse(
            file: path, fileBytes: byteCount,
            read: { (offset, count) throws(ImageError) -> [UInt8] in try read(offset: offset, count: count) },
            heif: { (format, bytes) throws(ImageError) -> HEIFHeader in
                // Vitrine's own reading of the boxes finds a grid to decode tile by tile; a file it cannot read
                // that way is left to libheif whole, as before, which says what is wrong with it.
                let container = try? HEIFContainer.parse(file: path, format: format, read: bytes)
                let grid = container.flatMap { try? HEIFGrid.read($0, file: path, format: format, read: bytes) }
                let still = container.flatMap { try? HEIFStill.read($0, file: path, format: format) }
                return try HEIFFile(path: path, descriptor: descriptor, fileBytes: byteCount).header(
                    avif: format == .avif, container: container, grid: grid, still: still)
            },
            clip: { () throws(ImageError) -> ClipHeader in try ClipFile(path: path).header })
    }
}
