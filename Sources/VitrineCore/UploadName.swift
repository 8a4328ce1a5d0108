/// The name a photo uploaded from a phone is saved under in a category: the name the phone offered, made safe. A
/// name that would leave the category (a path separator, `..`) is refused outright, not cleaned up: it is never
/// what a phone sends. A leading dot (a hidden file the library skips), control characters and `@` (which would
/// make `NAME@WxH.jpg` look like a rendition) are replaced, an overlong name is shortened keeping its extension,
/// and a name already taken gets ` (2)`, ` (3)`... so nothing the owner has is overwritten.
public enum UploadName {
    public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        case empty
        case leavesTheFolder(String)
        case notAPhoto(String)
        case noFreeName(String)

        public var description: String {
            switch self {
            case .empty: return "the file has no name"
            case .leavesTheFolder(let name):
                return "\(JSONText.quote(name)) is a path, not a file name (no / or \\ allowed)"
            case .notAPhoto(let name):
                return "\(JSONText.quote(name)) is not a photo name (.jpg, .jpeg, .png, .webp, .heic, .heif, .hif, "
                    + ".avif)"
            case .noFreeName(let name): return "every variant of \(JSONText.quote(name)) is taken"
            }
        }
    }

    /// Longest name in bytes: well inside the 255 of ext4, FAT and exFAT, with room for a ` (999)` suffix.
    public static let maximumBytes = 200

    public static func safe(_ offered: String, taken: (String) -> Bool) -> Result<String, Refusal> {
        // One spelling per name: a Mac or an iPhone sends "été" decomposed (NFD), Android and Windows composed
        // (NFC), and the file system keeps the bytes, so both would be saved as two files that look the same.
        // The standard library's own NFC (there is no other without Foundation).
        let composed = String(decoding: offered._nfcCodeUnits, as: UTF8.self)
        let trimmed = composed.trimmingWhitespace()
        guard !trimmed.isEmpty else { return .failure(.empty) }
        guard !trimmed.contains(where: { $0 == "/" || $0 == "\\" }), !trimmed.unicodeScalars.contains("\0") else {
            return .failure(.leavesTheFolder(offered))
        }
        var name = String(
            String.UnicodeScalarView(
                trimmed.unicodeScalars.map { scalar in
                    scalar.value < 0x20 || scalar.value == 0x7F || scalar == "@" ? "_" : scalar
                }))
        while name.hasPrefix(".") { name.removeFirst() }
        guard !name.isEmpty, Library.isPhotoName(name), let dot = name.lastIndex(of: ".") else {
            return .failure(name.isEmpty ? .empty : .notAPhoto(offered))
        }
        var stem = String(name[..<dot])
        let suffix = String(name[dot...])
        while stem.utf8.count + suffix.utf8.count > maximumBytes { stem.removeLast() }
        guard !stem.isEmpty else { return .failure(.notAPhoto(offered)) }
        let first = stem + suffix
        guard taken(first) else { return .success(first) }
        for number in 2...999 {
            let candidate = "\(stem) (\(number))\(suffix)"
            if !taken(candidate) { return .success(candidate) }
        }
        return .failure(.noFreeName(offered))
    }
}
