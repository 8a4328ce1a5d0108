import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Whether the tests run under CI (`CI=true`), where a missing prerequisite is a failure, never a skip.
public let runningUnderCI: Bool = {
    guard let ci = getenv("CI") else { return false }
    return String(cString: ci) == "true"
}()

/// A real tmpfs of a given size mounted over a folder, for a disk that is full or small. Mounting needs root: where
/// it is refused, `refused` is told why under CI (which runs as root), and the caller skips elsewhere.
public final class TemporaryMount {
    public let path: String

    public init?(tmpfsAt path: String, megabytes: Int, refused: (String) -> Void) {
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(megabytes)m,mode=0755") == 0 else {
            if runningUnderCI { refused("cannot mount a tmpfs at \(path): \(String(cString: strerror(errno)))") }
            return nil
        }
        self.path = path
    }

    public func unmount() { umount2(path, Int32(MNT_DETACH)) }
}
