import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Defence in depth against a photo that crashes the player (a decoder bug nobody has found yet). Before a slide
/// is decoded its files are written to a marker in the state directory, and the marker is emptied after: a
/// marker that still names files at the next start means the player died while decoding them. A file named so
/// at `limit` starts is set aside: logged, and skipped like a broken photo until its entry is removed, so an
/// unknown bug cannot become a crash loop under the service manager (which gives up after five).
///
/// The marker is written without fsync: the page cache outlives the process, and only a crash of the process
/// needs catching (a power cut is not the photo's fault).
package final class CrashGuard: @unchecked Sendable {
    // @unchecked: `marker` is written only by the decode worker's thread; the rest never changes after init.
    static let limit = 2
    static let markerName = "decoding"
    static let countsName = "crashed-while-decoding"

    /// Files that were being decoded at `limit` crashes or more.
    let setAside: Set<String>
    /// What the start found, for the log.
    package let notes: [String]
    private let marker: Int32

    /// Reads what an earlier run left in `folder` (the state directory); without one nothing is guarded.
    package init(folder: String?) {
        guard let folder else {
            setAside = []
            notes = []
            marker = -1
            return
        }
        let markerPath = "\(folder)/\(Self.markerName)"
        let countsPath = "\(folder)/\(Self.countsName)"
        var counts = Self.readCounts(countsPath)
        var notes: [String] = []
        let crashed = ((try? FileBytes.readText(markerPath)) ?? "")
            .split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        if !crashed.isEmpty {
            for file in crashed { counts[file, default: 0] += 1 }
            let text = counts.sorted { $0.key < $1.key }.map { "\($0.value)\t\($0.key)\n" }.joined()
            try? FileBytes.writeAtomically(Array(text.utf8), to: countsPath)
            notes.append(
                "the last run stopped while decoding \(crashed.joined(separator: " + ")) "
                    + "(\(crashed.map { counts[$0] ?? 0 }.max() ?? 0) time(s) so far)")
        }
        let setAside = Set(counts.filter { $0.value >= Self.limit }.keys)
        for file in setAside.sorted() {
            notes.append(
                "\(file) is set aside: the player stopped \(counts[file] ?? 0) times while decoding it; remove its "
                    + "line from \(countsPath) to try it again")
        }
        self.setAside = setAside
        self.notes = notes
        _ = mkdir(folder, 0o755)
        marker = open(markerPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    }

    deinit { if marker >= 0 { close(marker) } }

    /// On the decode worker: these files are being decoded now.
    func decoding(_ files: [String]) {
        guard marker >= 0 else { return }
        let text = Array(files.map { $0 + "\n" }.joined().utf8)
        _ = ftruncate(marker, 0)
        _ = text.withUnsafeBytes { pwrite(marker, $0.baseAddress, $0.count, 0) }
    }

    /// On the decode worker: the decode ended (well or not, but without taking the player with it).
    func done() {
        guard marker >= 0 else { return }
        _ = ftruncate(marker, 0)
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
