import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What indexing needs from a photo's header (its capture date for `newest` order, its upright size for portrait
/// pairs), kept in a small file per category so a restart of a large library reads no header of a photo that has
/// not changed. An entry holds while the file's size and modification time (to the nanosecond) are the same.
///
/// The file lists photos sorted by their path inside the category, and the indexer asks in that order: the file is
/// read as a stream beside the asking and written again only from the first difference on, so a 100,000-photo
/// category neither holds its cache in memory nor rewrites it at a start where nothing changed (an SD card wears
/// with every write).
final class HeaderCache {
    struct Facts: Equatable {
        /// Seconds since the epoch from EXIF `DateTimeOriginal`, when the photo has one.
        var captureDate: Double?
        var uprightSize: Size?
        /// `xmp:Rating`, when the photo has one.
        var rating: Int? = nil
    }

    private struct Line {
        var path: ArraySlice<UInt8>
        var size: Int64
        var modified: Int64
        var facts: Facts
        /// The whole line as it was read, with its newline, and where it starts in the file.
        var bytes: ArraySlice<UInt8>
        var offset: Int
    }

    static let formatLine = "vitrine header cache 2"

    /// The cache file; nil keeps nothing across indexes.
    let file: String?
    private let folder: String
    private var reader: LineReader?
    private var pending: Line?
    private var writer: BufferedWriter?
    /// Something differs from the file as read: it is written again.
    private var changed = false
    private var lastAsked: [UInt8]?
    private var problem: String?
    /// A cache file was there to read: a photo it does not know is new since the last index.
    private(set) var knewLibrary = false
    private(set) var headersRead = 0
    private(set) var entriesReused = 0

    /// The cache for `category` in `directory` (nil: none). A missing or unreadable file is an empty cache.
    init(directory: String?, category: LibraryCategory) {
        folder = category.path
        file = directory.map { "\($0)/\(Self.fileName(for: category.path))" }
        guard let file else { return }
        if let reader = LineReader(path: file), let first = reader.nextLine(),
            first.bytes.dropLast().elementsEqual(Self.formatLine.utf8)
        {
            self.reader = reader
            knewLibrary = true
            advance()
        } else {
            // No cache yet (or one not of this format): a new one is written from the start.
            changed = true
            startWriting()
        }
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

    /// The facts of `path` and its modification time in seconds; `read` is asked only when the cache has no entry
    /// for the file as it is now. Nil when the file cannot be looked at. Paths are asked for in increasing byte
    /// order of their part inside the category; one asked out of that order is read and not kept.
    func facts(of path: String, read: (String) -> Facts?) -> (facts: Facts?, modified: Double)? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        let modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        let size = Int64(status.st_size)
        let seconds = Double(status.st_mtim.tv_sec)
        let prefix = folder.utf8.count + 1
        let key = Array(path.utf8.dropFirst(prefix))
        guard path.utf8.count > prefix, path.hasPrefix(folder + "/"), !key.contains(UInt8(ascii: "\n")),
            !key.contains(UInt8(ascii: "\t")), lastAsked.map({ $0.lexicographicallyPrecedes(key) }) ?? true
        else {
            headersRead += 1
            return (read(path), seconds)
        }
        lastAsked = key
        // Entries before this path are of photos that went.
        while let line = pending, line.path.lexicographicallyPrecedes(key) {
            noteChange(before: line.offset)
            advance()
        }
        if let line = pending, line.path.elementsEqual(key) {
            if line.size == size, line.modified == modified {
                advance()
                entriesReused += 1
                writer?.append(line.bytes)
                return (line.facts, seconds)
            }
            noteChange(before: line.offset)
            advance()
        }
        noteChange(before: pending?.offset)
        headersRead += 1
        let facts = read(path)
        // A header that cannot be read now (a file still arriving) is not remembered.
        if let facts {
            let date = facts.captureDate.map { "\($0)" } ?? "-"
            let dimensions = facts.uprightSize.map { "\($0.width)\t\($0.height)" } ?? "-\t-"
            let rating = facts.rating.map(String.init) ?? "-"
            writer?.append(Array("\(size)\t\(modified)\t\(date)\t\(dimensions)\t\(rating)\t".utf8)[...])
            writer?.append(key[...])
            writer?.append([UInt8(ascii: "\n")][...])
        }
        return (facts, seconds)
    }

    /// Finishes the file: entries never asked for are of photos that went. Written only when something changed;
    /// a cache that cannot be written is only slower next time, and the reason is returned for one log line.
    func save() -> String? {
        while let line = pending {
            noteChange(before: line.offset)
            advance()
        }
        reader = nil
        guard let file, changed else { return problem }
        if writer == nil { startWriting() }
        if let failure = writer?.finish(renamingTo: file) {
            problem =
                problem ?? "the header cache \(file) was not saved (\(failure)); the next start reads the "
                + "headers again"
        }
        writer = nil
        return problem
    }

    private func advance() {
        pending = nil
        while let next = reader?.nextLine() {
            if let line = Self.parse(next.bytes, offset: next.offset) {
                pending = line
                return
            }
            noteChange(before: next.offset)
        }
    }

    /// From the first difference on the file is written again: the lines taken unchanged so far (everything before
    /// `offset`, or everything read when nil) are copied first.
    private func noteChange(before offset: Int?) {
        guard !changed else { return }
        changed = true
        startWriting(copying: offset ?? reader?.consumed ?? 0)
    }

    private func startWriting(copying count: Int = 0) {
        guard let file, writer == nil, problem == nil else { return }
        do {
            try FileBytes.createDirectories(PathText.directory(of: file))
            let writer = try BufferedWriter(path: "\(file).tmp-\(getpid())")
            if let reader, count > 0 {
                try reader.copyStart(count, to: writer)
            } else {
                writer.append(Array((Self.formatLine + "\n").utf8)[...])
            }
            self.writer = writer
        } catch {
            problem = "the header cache \(file) was not saved (\(error)); the next start reads the headers again"
        }
    }

    private static func parse(_ bytes: ArraySlice<UInt8>, offset: Int) -> Line? {
        let fields = bytes.dropLast().split(
            separator: UInt8(ascii: "\t"), maxSplits: 6, omittingEmptySubsequences: false)
        guard fields.count == 7, let size = number(fields[0]), let modified = number(fields[1]), !fields[6].isEmpty
        else { return nil }
        let rating = Int(String(decoding: fields[5], as: UTF8.self)).flatMap { (-1...5).contains($0) ? $0 : nil }
        let captureDate = Double(String(decoding: fields[2], as: UTF8.self))
        var uprightSize: Size?
        if let width = number(fields[3]), let height = number(fields[4]), width > 0, height > 0 {
            uprightSize = Size(width: Int(width), height: Int(height))
        }
        return Line(
            path: fields[6], size: size, modified: modified,
            facts: Facts(captureDate: captureDate, uprightSize: uprightSize, rating: rating), bytes: bytes,
            offset: offset)
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> Int64? {
        guard !bytes.isEmpty, bytes.count <= 19 else { return nil }
        var value: Int64 = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            // Nineteen digits may not fit: a damaged cache file's number is no number, not a trap.
            let (tens, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowPlus) = tens.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowTimes, !overflowPlus else { return nil }
            value = next
        }
        return value
    }
}
