/// What the player's caches leave free on their disk. The rendition cache lives in the state folder, and on an
/// appliance that is a small partition beside a read-only root: whatever a cache takes, the position, the stars and
/// the web remote's token must still be saved there. 32 MiB, or 5% of a larger disk, so an SD card is never filled
/// past 95% by a cache; half of a disk smaller than 64 MiB.
public enum DiskFloor {
    public static func bytes(total: Int) -> Int { min(max(32 << 20, total / 20), total / 2) }

    /// A bound on the bytes of a rendition of this size: a JPEG at quality 90 takes about 0.2 to 0.6 bytes a pixel
    /// of a photo, so one byte a pixel and the headers is ample.
    public static func bound(_ size: Size) -> Int { size.width.saturatingTimes(size.height).saturatingPlus(64 << 10) }
}
