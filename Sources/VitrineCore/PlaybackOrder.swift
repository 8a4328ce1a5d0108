/// The order slides are shown in within a category.
public enum PlaybackOrder: String, Sendable, CaseIterable {
    /// Natural sort of the file names (`img2` before `img10`).
    case name
    /// Every slide once per round, in a fresh random order each round.
    case shuffle
    /// Newest first, by EXIF capture date, else by file time.
    case newest
}
