import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What indexing needs from a photo's header (its capture date for `newest` order, its upright size for portrait
/// pairs), kept in a small file per category so a restart of a large library reads no header of a photo that has
/// not changed. An entry holds while the file's size and modification time (to the nanosecond) are the same.
///
/// The file is read at the start of one index and written at its end with exactly the photos that index saw, so
/// photos that went are forgotten and nothing stays in memory between indexes.
final class HeaderCache {
    struct Facts: Equatable {
        /// Seconds since the epoch from EXIF `DateTimeOriginal`, when the photo has one.
        var captureDate: Double?
        var uprightSize: Size?
    }

    private struct Entry {
        var size: Int64
        var modified: Int64
        var facts: Facts
    }

    /// The cache file; nil keeps nothing across indexes (the facts are still read once per index).
    let file: String?
    /// Relative paths are kept: the category's folder is the same for every entry.
    private let folder: String
    private var loaded: [String: Entry] = [:]
    private var seen: [String: Entry] = [:]
    private(set) var headersRead = 0
    private(set) var entriesReused = 0

    static let formatLine = "vitrine header cache 1"

    /// The cache for `category` in `directory` (nil: none), loaded now; a missing or unreadable file is an empty
    /// cache.
    init(directory: String?, category: LibraryCategory) {
        folder = category.path
        file = directory.map { "\($0)/\(Self.fileName(for: category.path))" }
        if let file, let text = try? FileBytes.readText(file) { loaded = Self.parse(text) }
    }

    /// The file name for a category folder: its path hashed (FNV-1a), so any folder name gives a plain file name.
    static func fileName(for folder: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in folder.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + ".tsv"
    }

    /// The facts of `path` and its modification time in seconds; `read` is asked only when the cache has no
    /// entry for the file as it is now. Nil when the file cannot be looked at.
    func facts(of path: String, read: (String) -> Facts?) -> (facts: Facts?, modified: Double)? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        let modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        let size = Int64(status.st_size)
        let key = relative(path)
        if let entry = loaded[key], entry.size == size, entry.modified == modified {
            seen[key] = entry
            entriesReused += 1
            return (entry.facts, Double(status.st_mtim.tv_sec))
        }
        let facts = read(path)
        headersRead += 1
        // A header that cannot be read now (a file still arriving) is not remembered.
        if let facts { seen[key] = Entry(size: size, modified: modified, facts: facts) }
        return (facts, Double(status.st_mtim.tv_sec))
    }

    /// Writes what this index saw, when it differs from what was loaded. A cache that cannot be written is only
    /// slower next time: the reason is returned for one log line.
    func save() -> String? {
        guard let file else { return nil }
        let unchanged =
            seen.count == loaded.count
            && seen.allSatisfy { key, entry in
                loaded[key].map { $0.size == entry.size && $0.modified == entry.modified && $0.facts == entry.facts }
                    ?? false
            }
        if unchanged { return nil }
        var text = Self.formatLine + "\n"
        for (key, entry) in seen where !key.contains("\n") && !key.contains("\t") {
            let date = entry.facts.captureDate.map { "\($0)" } ?? "-"
            let size = entry.facts.uprightSize.map { "\($0.width)\t\($0.height)" } ?? "-\t-"
            text += "\(entry.size)\t\(entry.modified)\t\(date)\t\(size)\t\(key)\n"
        }
        do {
            try FileBytes.createDirectories(FileBytes.directory(of: file))
            try FileBytes.writeAtomically(Array(text.utf8), to: file)
        } catch {
            return "the header cache \(file) was not saved (\(error)); the next start reads the headers again"
        }
        return nil
    }

    private func relative(_ path: String) -> String {
        path.hasPrefix(folder + "/") ? String(path.utf8.dropFirst(folder.utf8.count + 1)) ?? path : path
    }

    /// The entries of a cache file; lines that do not read are skipped (the photo's header is read again).
    private static func parse(_ text: String) -> [String: Entry] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)[...]
        guard lines.first == Substring(formatLine) else { return [:] }
        lines = lines.dropFirst()
        var entries: [String: Entry] = [:]
        entries.reserveCapacity(lines.count)
        for line in lines {
            let fields = line.split(separator: "\t", maxSplits: 5, omittingEmptySubsequences: false)
            guard fields.count == 6, let size = Int64(fields[0]), let modified = Int64(fields[1]) else { continue }
            let captureDate = Double(fields[2])
            let uprightSize: Size?
            if let width = Int(fields[3]), let height = Int(fields[4]), width > 0, height > 0 {
                uprightSize = Size(width: width, height: height)
            } else {
                uprightSize = nil
            }
            entries[String(fields[5])] = Entry(
                size: size, modified: modified, facts: Facts(captureDate: captureDate, uprightSize: uprightSize))
        }
        return entries
    }
}
