#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads an inotify descriptor (non-blocking) until it has nothing more, handing each event and the name it carries
/// (empty for the watched folder itself) to `each`, in order. inotify(7): a read returns whole events only, each a
/// fixed header followed by `len` bytes of NUL-padded name.
public enum InotifyEvents {
    public static func read(_ descriptor: Int32, bufferBytes: Int, _ each: (inotify_event, String) -> Void) {
        let header = MemoryLayout<inotify_event>.size
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: bufferBytes, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = Glibc.read(descriptor, buffer, bufferBytes)
            guard count > 0 else { return }
            var offset = 0
            while offset + header <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameBytes = Int(event.len)
                let name = String(
                    decoding: UnsafeRawBufferPointer(start: buffer + offset + header, count: nameBytes).prefix {
                        $0 != 0
                    }, as: UTF8.self)
                offset += header + nameBytes
                each(event, name)
            }
        }
    }
}
