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
        InotifyEvents.read(descriptor, bufferBytes: 4096) { event, entry in
            // A lost event may have been the zone's.
            if entry == name || event.mask & UInt32(IN_Q_OVERFLOW) != 0 { changed = true }
        }
        return changed
    }
}
