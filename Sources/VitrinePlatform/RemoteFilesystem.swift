import CLinux

/// Filesystems whose changes made elsewhere (another machine, the far side of a FUSE mount) reach no inotify watch
/// here, so a library on them is read again on a timer. Told apart by `statfs`'s magic numbers (linux/magic.h and
/// the filesystems' own sources).
package enum RemoteFilesystem {
    /// The kind of filesystem `path` is on when it is one of those, nil otherwise (or when it cannot be asked).
    package static func kind(of path: String) -> String? {
        let type = vitrine_filesystem_type(path)
        guard type >= 0 else { return nil }
        return kind(magic: UInt64(type))
    }

    static func kind(magic: UInt64) -> String? {
        switch magic & 0xFFFF_FFFF {
        case 0x6969: return "NFS"
        case 0xFF53_4D42: return "SMB/CIFS"
        case 0xFE53_4D42: return "SMB2"
        case 0x517B: return "SMB"
        case 0x6573_5546: return "FUSE (sshfs, rclone, bindfs and the like)"
        case 0x0102_1997: return "9p"
        case 0x7363_6673: return "Ceph"
        case 0x6B41_4653: return "AFS"
        default: return nil
        }
    }
}
