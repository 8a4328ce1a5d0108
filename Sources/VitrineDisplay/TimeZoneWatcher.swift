import CLinux
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Notices the system's time zone changing, so the clock shows the new local time at once rather than at the next
/// minute: `timedatectl set-timezone` replaces the `/etc/localtime` link, which no clock event announces.
final class TimeZoneWatcher {
    private let owned: Descriptor
    var descriptor: Int32 { owned.number }
    private let folder: String
    private let name: String

    /// The folder is watched, not the file: the link is replaced by a rename onto it, which a watch on the old
    /// file would not see.
    init(path: String = "/etc/localtime") throws(RuntimeError) {
        folder = PathText.directory(of: path)
        name = path.split(separator: "/").last.map(String.init) ?? path
        owned = try SystemCall.open("start inotify") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        let events = UInt32(IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE)
        try SystemCall.run("watch the time zone", path: folder) { [owned = owned.number] in
            inotify_add_watch(owned, folder, events)
        }
    }

    /// Reads what happened in the folder; true when the zone file was among it.
    func takeChange() -> Bool {
        var changed = false
        let capacity = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = Glibc.read(descriptor, buffer, capacity)
            guard count > 0 else { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameBytes = Int(event.len)
                let start = buffer.advanced(by: offset + MemoryLayout<inotify_event>.size)
                let entry = String(
                    decoding: UnsafeRawBufferPointer(start: start, count: nameBytes).prefix { $0 != 0 }, as: UTF8.self)
                offset += MemoryLayout<inotify_event>.size + nameBytes
                // A lost event may have been the zone's.
                if entry == name || event.mask & UInt32(IN_Q_OVERFLOW) != 0 { changed = true }
            }
        }
        return changed
    }
}
