import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads a file line by line through a 64 KiB buffer, so a large file is never held whole.
package final class LineReader {
    private let owned: Descriptor
    private var descriptor: Int32 { owned.number }
    private var buffer: [UInt8] = []
    /// Where the unread part of `buffer` starts, and the file offset of `buffer[0]`.
    private var position = 0
    private var bufferOffset = 0
    private var atEnd = false
    static let chunk = 64 << 10

    /// Nil when the file cannot be opened.
    package init?(path: String) {
        owned = Descriptor(taking: open(path, O_RDONLY | O_CLOEXEC))
        guard owned.number >= 0 else { return nil }
    }

    /// The file offset up to which lines have been returned.
    package var consumed: Int { bufferOffset + position }

    /// The next line with its newline (the last one may lack it), and its offset in the file; nil at the end.
    package func nextLine() -> (bytes: ArraySlice<UInt8>, offset: Int)? {
        while true {
            if let newline = buffer[position...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[position...newline]
                let offset = bufferOffset + position
                position = newline + 1
                return (line, offset)
            }
            if atEnd {
                guard position < buffer.count else { return nil }
                let line = buffer[position...]
                let offset = bufferOffset + position
                position = buffer.count
                return (line, offset)
            }
            fill()
        }
    }

    private func fill() {
        if position > 0 {
            bufferOffset += position
            buffer.removeFirst(position)
            position = 0
        }
        let start = buffer.count
        buffer += [UInt8](repeating: 0, count: Self.chunk)
        var count = -1
        repeat {
            count = buffer.withUnsafeMutableBytes { raw in
                read(descriptor, raw.baseAddress.map { $0 + start }, Self.chunk)
            }
        } while count < 0 && errno == EINTR
        buffer.removeLast(Self.chunk - max(count, 0))
        if count <= 0 { atEnd = true }
    }

    /// Copies the file's first `count` bytes to `writer` (read again with pread; the stream position stays).
    package func copyStart(_ count: Int, to writer: BufferedWriter) throws(FileError) {
        var chunk = [UInt8](repeating: 0, count: Self.chunk)
        var offset = 0
        while offset < count {
            let wanted = min(Self.chunk, count - offset)
            let got = chunk.withUnsafeMutableBytes { raw in pread(descriptor, raw.baseAddress, wanted, off_t(offset)) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { throw FileError(path: writer.path, operation: "copy the old cache", errno: errno) }
            writer.append(chunk[..<got])
            offset += got
        }
    }
}
