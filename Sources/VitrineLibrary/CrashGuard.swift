import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Defence in depth against a photo that crashes the player (a decoder bug nobody has found yet). Before a file's
/// data is parsed (a slide decoded on the decode worker, a header read on the index worker) its path is written to
/// that worker's marker in the state directory, and the marker is emptied after: a marker that still names files
/// at the next start means the player died while reading them. A file named so at `limit` starts is set aside:
/// logged, and skipped like a broken photo until its entry is removed, so an unknown bug cannot become a crash loop
/// under the service manager (which gives up after five).
///
/// The markers are written without fsync: the page cache outlives the process, and only a crash of the process
/// needs catching (a power cut is not the photo's fault). Under the service they are in the runtime folder
/// (`/run/vitrine`, in memory, kept across the service's restarts), so a slide's decode writes nothing to the SD
/// card; only the counts of a crash found go to the state folder.
package final class CrashGuard: @unchecked Sendable {
    // @unchecked: a marker is written under `reading`'s lock; the rest never changes after init.
    static let limit = 2
    static let countsName = "crashed-while-decoding"

    /// The workers that parse file data, each with a marker of its own.
    package enum Reader: CaseIterable, Sendable {
        case decode, index

        var markerName: String {
            switch self {
            case .decode: "decoding"
            case .index: "reading-headers"
            }
        }

        var doing: String {
            switch self {
            case .decode: "decoding"
            case .index: "reading the header of"
            }
        }
    }

    /// Files that were being read at `limit` crashes or more.
    package let setAside: Set<String>
    /// What the start found, for the log.
    package let notes: [String]
    /// A reader's marker file, open for the guard's lifetime.
    private final class Marker: Sendable {
        let file: Descriptor
        init(_ file: consuming Descriptor) { self.file = file }
    }

    private let markers: [Reader: Marker]
    /// What each worker thread of each kind is reading now (several screens' shows have a decode worker each):
    /// a marker names them all.
    private let current = Locked<[Reader: [UInt: [String]]]>([:])

    /// Reads what an earlier run left in `markerFolder` (the runtime folder, else `folder`) and keeps the counts
    /// in `folder` (the state directory); without a folder nothing is guarded.
    package init(folder countsFolder: String?, markers markerFolder: String? = nil) {
        guard let countsFolder else {
            setAside = []
            notes = []
            markers = [:]
            return
        }
        let folder = markerFolder ?? countsFolder
        let countsPath = "\(countsFolder)/\(Self.countsName)"
        var counts = Self.readCounts(countsPath)
        var notes: [String] = []
        var found: [(Reader, [String])] = []
        for reader in Reader.allCases {
            let crashed = ((try? FileBytes.readText("\(folder)/\(reader.markerName)")) ?? "")
                .split(separator: "\n").map(String.init).filter { !$0.isEmpty }
            if !crashed.isEmpty { found.append((reader, crashed)) }
        }
        for (_, crashed) in found {
            for file in crashed { counts[file, default: 0] += 1 }
        }
        if !found.isEmpty {
            let text = counts.sorted { $0.key < $1.key }.map { "\($0.value)\t\($0.key)\n" }.joined()
            try? FileBytes.writeAtomically(Array(text.utf8), to: countsPath)
        }
        for (reader, crashed) in found {
            notes.append(
                "the last run stopped while \(reader.doing) \(crashed.joined(separator: " + ")) "
                    + "(\(crashed.map { counts[$0] ?? 0 }.max() ?? 0) time(s) so far)")
        }
        let setAside = Set(counts.filter { $0.value >= Self.limit }.keys)
        for file in setAside.sorted() {
            notes.append(
                "\(file) is set aside: the player stopped \(counts[file] ?? 0) times while reading it; remove its "
                    + "line from \(countsPath) to try it again")
        }
        self.setAside = setAside
        self.notes = notes
        // There already is the usual case; a folder that cannot be made leaves the markers unmade (below).
        _ = mkdir(folder, 0o755)
        var markers: [Reader: Marker] = [:]
        for reader in Reader.allCases {
            // A marker that cannot be made (a read-only state folder) guards nothing; the show goes on.
            let file = Descriptor(
                taking: open("\(folder)/\(reader.markerName)", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644))
            if file.number >= 0 { markers[reader] = Marker(file) }
        }
        self.markers = markers
    }

    /// On `reader`'s worker: these files are being read now.
    func reading(_ files: [String], on reader: Reader) {
        update(reader) { $0[UInt(pthread_self())] = files }
    }

    /// On `reader`'s worker: the reading ended (well or not, but without taking the player with it).
    func done(on reader: Reader) {
        update(reader) { $0[UInt(pthread_self())] = nil }
    }

    /// Changes what this kind of worker reads and writes the marker anew, under the lock (two workers of a kind
    /// must not write one file at once).
    private func update(_ reader: Reader, _ change: (inout [UInt: [String]]) -> Void) {
        guard let marker = markers[reader]?.file.number else { return }
        current.withLock { current in
            change(&current[reader, default: [:]])
            let files = current[reader, default: [:]].values.flatMap { $0 }
            let text = Array(files.map { $0 + "\n" }.joined().utf8)
            // A marker that cannot be written guards nothing, and reading goes on: the guard is defence in depth.
            _ = ftruncate(marker, 0)
            _ = text.withUnsafeBytes { pwrite(marker, $0.baseAddress, $0.count, 0) }
        }
    }

    /// Reads `file` on `reader`'s worker with the marker set around it; nil when the file is set aside.
    func guarding<T>(_ file: String, on reader: Reader, _ read: () -> T?) -> T? {
        guard !setAside.contains(file) else { return nil }
        reading([file], on: reader)
        defer { done(on: reader) }
        return read()
    }

    static func readCounts(_ path: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in ((try? FileBytes.readText(path)) ?? "").split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            guard parts.count == 2, let count = Int(parts[0]), count > 0 else { continue }
            counts[String(parts[1])] = count
        }
        return counts
    }
}
