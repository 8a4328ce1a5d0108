import CLinux
import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The folder systemd gives the service for files it keeps across restarts (`StateDirectory=`). A player started
/// by hand has none and leaves no files behind unless its config names them.
public enum StateDirectory {
    /// The folder `settle` chose, once it has run: the state folder, or in its place one that can be written.
    private static let settled = Locked<String??>(nil)

    /// Where the player keeps its state: `$STATE_DIRECTORY` (it may list several folders separated by colons, and
    /// the first is this service's), or what `settle` chose instead when that cannot be written.
    public static var path: String? {
        if let chosen = settled.withLock({ $0 }) { return chosen }
        return Self.first(of: "STATE_DIRECTORY")
    }

    /// `$RUNTIME_DIRECTORY` (`/run/vitrine`): in memory, kept while the service restarts after a crash
    /// (`RuntimeDirectoryPreserve=restart`), gone when the board restarts.
    public static var runtimePath: String? { first(of: "RUNTIME_DIRECTORY") }

    private static func first(of variable: String) -> String? {
        guard let value = getenv(variable).map({ String(cString: $0) }), !value.isEmpty else { return nil }
        return value.split(separator: ":").first.map(String.init) ?? value
    }

    /// Looks at the state folder once, as the player starts, and returns what the log should say of it (at most
    /// one line). A folder that cannot be written (a read-only root without a writable partition for it) is
    /// replaced by one in the runtime folder, so the show still resumes after a crash; one in memory is kept but
    /// said to be lost at reboot. Nothing is said when all is well.
    public static func settle() -> String? {
        guard let folder = first(of: "STATE_DIRECTORY") else { return nil }
        // systemd makes it; a player started by hand with the variable set may be the first to use it.
        try? FileBytes.createDirectories(folder)
        let probe = "\(folder)/.vitrine-write-probe-\(getpid())"
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
            unlink(probe)
            settled.withLock { $0 = .some(folder) }
            return impermanence(of: folder).map { how in
                "the state folder \(folder) is \(how): the slide to resume from, the stars and the caches are lost "
                    + "when the board restarts"
            }
        }
        let why = String(cString: strerror(errno))
        guard let runtime = runtimePath else {
            settled.withLock { $0 = .some(nil) }
            return "the state folder \(folder) cannot be written (\(why)): the slide to resume from, the stars and "
                + "the caches are not kept"
        }
        let fallback = "\(runtime)/state"
        _ = mkdir(fallback, 0o700)
        settled.withLock { $0 = .some(fallback) }
        return "the state folder \(folder) cannot be written (\(why)): the slide to resume from, the stars and the "
            + "caches are kept in \(fallback) until the board restarts"
    }

    /// Why what is written in `path` will not last: `read-only`, `in memory (tmpfs)`, `on an overlay`; nil for a
    /// disk (or a path that cannot be looked at).
    public static func impermanence(of path: String) -> String? {
        var flags = statvfs()
        if statvfs(path, &flags) == 0, flags.f_flag & UInt(ST_RDONLY) != 0 { return "read-only" }
        let type = vitrine_filesystem_type(path)
        guard type >= 0 else { return nil }
        // linux/magic.h: TMPFS_MAGIC, RAMFS_MAGIC, OVERLAYFS_SUPER_MAGIC.
        switch type {
        case 0x0102_1994, 0x8584_58F6: return "in memory (tmpfs)"
        case 0x794C_7630: return "on an overlay (Raspberry Pi OS's overlay file system)"
        default: return nil
        }
    }

    /// `renditionCacheFolder`, else `$STATE_DIRECTORY/renditions`, else none.
    public static func renditionCacheFolder(settings: Settings) -> String? {
        if let explicit = settings.renditionCacheFolder { return explicit.isEmpty ? nil : explicit }
        return path.map { "\($0)/renditions" }
    }

    /// `headerCacheFolder`, else `$STATE_DIRECTORY/headers`, else none.
    public static func headerCacheFolder(settings: Settings) -> String? {
        if let explicit = settings.headerCacheFolder { return explicit.isEmpty ? nil : explicit }
        return path.map { "\($0)/headers" }
    }
}
