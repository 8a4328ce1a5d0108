/// A photo library folder: its subfolders are categories, photos directly in it form one more category.
///
/// What is a photo, by name. Reading the folders is VitrineLibrary's (`Library+Listing.swift`).
public struct Library: Sendable {
    public var root: String

    public init(root: String) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
    }

    /// Whether a file name is a photo the library shows. Hidden files, partial downloads and editor backups are
    /// skipped: they are either not the user's photos or not finished yet.
    public static func isPhotoName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, first != UInt8(ascii: "."), bytes.last != UInt8(ascii: "~") else { return false }
        for partial in partialSuffixes where hasSuffix(bytes, partial) { return false }
        for suffix in photoSuffixes where hasSuffix(bytes, suffix) { return true }
        return false
    }

    /// What phones, cameras, screenshots and browsers name their pictures; the content decides the format.
    private static let photoSuffixes: [StaticString] = [
        ".jpg", ".jpeg", ".png", ".webp", ".heic", ".heif", ".hif", ".avif", ".mp4", ".mov", ".m4v", ".mkv", ".webm",
    ]
    private static let clipSuffixes: [StaticString] = [".mp4", ".mov", ".m4v", ".mkv", ".webm"]

    /// Whether a slide's file name is a clip's (played to its end rather than shown for the interval). The content
    /// decides the format when the file is read; the name is what the show can know without reading it.
    public static func isClipName(_ name: String) -> Bool {
        clipSuffixes.contains { hasSuffix(name.utf8, $0) }
    }
    private static let partialSuffixes: [StaticString] = [".part", ".tmp", ".crdownload", ".partial", ".download"]

    /// Whether `bytes` ends with `suffix` (lowercase ASCII), ignoring ASCII case: no lowercased copy of the name,
    /// which a listing of 100,000 files would make 100,000 times.
    private static func hasSuffix(_ bytes: String.UTF8View, _ suffix: StaticString) -> Bool {
        let count = suffix.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        return suffix.withUTF8Buffer { wanted in
            zip(bytes.suffix(count), wanted).allSatisfy { byte, lower in
                (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte) == lower
            }
        }
    }

    /// Splits `NAME@WxH.jpg` into `NAME` and the size; nil for a plain photo name.
    public static func renditionParts(of fileName: String) -> (name: String, size: Size)? {
        guard let dot = fileName.lastIndex(of: "."), let at = fileName[..<dot].lastIndex(of: "@") else { return nil }
        let name = fileName[..<at]
        guard !name.isEmpty, let size = Size(parsing: fileName[fileName.index(after: at)..<dot]) else { return nil }
        return (String(name), size)
    }
}
