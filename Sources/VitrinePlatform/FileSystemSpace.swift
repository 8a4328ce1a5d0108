import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The room on the file system holding a path, as an unprivileged user has it (root's reserved blocks aside).
public enum FileSystemSpace {
    public static func of(_ path: String) throws(FileError) -> (free: Int, total: Int) {
        var space = statvfs()
        guard statvfs(path, &space) == 0 else {
            throw FileError(path: path, operation: "read the free space of", errno: errno)
        }
        return (
            Int(space.f_bavail).saturatingTimes(Int(space.f_frsize)),
            Int(space.f_blocks).saturatingTimes(Int(space.f_frsize))
        )
    }
}
