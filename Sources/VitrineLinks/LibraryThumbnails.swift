import VitrineCore
import VitrineImage
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The small pictures of the page's library view: made on the web worker from the photo's rendition when the
/// rendition cache has one (a panel-sized JPEG decodes in a fraction of the original's time, and a HEIC original
/// cannot be decoded shrunk), else from the original, within the player's memory budget; kept on disk in the state
/// directory when there is one, keyed by the file's path, size and time, so an edited photo gets a new one.
final class LibraryThumbnails: @unchecked Sendable {
    // @unchecked: `recent` and `writtenSincePrune` are touched only inside `withLock`; the rest never changes.
    static let side = 320
    static let recentLimit = 96
    /// The folder on disk holds at most this much; the least recently made go first. A thumbnail is about 15 KiB,
    /// so this keeps a few thousand, and a library turned over for years does not fill a frame's SD card.
    static let folderLimitBytes = 32 << 20
    /// The folder is measured (every file's size) once per this many thumbnails made, not for each.
    static let pruneEvery = 64

    private let budget: MemoryBudget
    private let libraryRoot: String
    private let renditionCache: String?
    private let folder: String?
    private let recent = Locked<[(key: String, jpeg: [UInt8])]>([])
    /// Thumbnails written since the folder was last measured; the first one measures it (a start after years).
    private let writtenSincePrune = Locked(LibraryThumbnails.pruneEvery - 1)

    init(budget: MemoryBudget, libraryRoot: String, renditionCache: String?, folder: String?) {
        self.budget = budget
        self.libraryRoot = libraryRoot
        self.renditionCache = renditionCache
        self.folder = folder
    }

    /// The thumbnail when it is made already: cheap enough for the loop thread.
    func cached(_ path: String) -> [UInt8]? {
        guard let key = Self.key(path) else { return nil }
        if let jpeg = recent.withLock({ $0.first { $0.key == key }?.jpeg }) { return jpeg }
        guard let folder, let jpeg = try? FileBytes.read("\(folder)/\(key).jpg", limit: 1 << 20) else { return nil }
        remember(key, jpeg)
        return jpeg
    }

    /// Makes it (the web worker's job).
    func make(_ path: String) -> WebServer.Response {
        if let jpeg = cached(path) { return Self.response(jpeg) }
        guard let key = Self.key(path) else { return .error(404, "\(path) is gone") }
        let source = rendition(of: path) ?? path
        let renderer = FrameRenderer(budget: budget)
        do {
            let header = try renderer.header(of: source)
            let shown = header.displayedSize
            let scale = min(1, Double(Self.side) / Double(max(1, max(shown.width, shown.height))))
            let canvas = Size(
                width: max(1, Int((Double(shown.width) * scale).rounded())),
                height: max(1, Int((Double(shown.height) * scale).rounded())))
            let rendered = try renderer.render(source, options: RenderOptions(canvas: canvas), header: header)
            let jpeg = try SlideThumbnail.jpeg(of: rendered.frame, maxSide: Self.side, quality: 75)
            remember(key, jpeg)
            if let folder {
                try? FileBytes.createDirectories(folder)
                // An edited photo's earlier thumbnails are of no more use.
                removeFiles(in: folder, startingWith: Self.pathHash(path) + "-", except: "\(key).jpg")
                try? FileBytes.writeAtomically(jpeg, to: "\(folder)/\(key).jpg")
                let due = writtenSincePrune.withLock { count in
                    count += 1
                    guard count >= Self.pruneEvery else { return false }
                    count = 0
                    return true
                }
                if due { Self.prune(folder, limit: Self.folderLimitBytes) }
            }
            return Self.response(jpeg)
        } catch {
            return .error(422, "cannot make a thumbnail of \(path): \(error.reasonText)")
        }
    }

    /// Forgets the thumbnails of a photo that left the library (trashed through the remote). On the worker.
    func forget(_ path: String) {
        let prefix = Self.pathHash(path) + "-"
        recent.withLock { $0.removeAll { $0.key.hasPrefix(prefix) } }
        if let folder { removeFiles(in: folder, startingWith: prefix, except: nil) }
    }

    private func removeFiles(in folder: String, startingWith prefix: String, except kept: String?) {
        for name in (try? Folder.entryNames(in: folder)) ?? [] where name.hasPrefix(prefix) && name != kept {
            unlink("\(folder)/\(name)")
        }
    }

    /// Keeps the folder under `limit` bytes, removing the oldest thumbnails first.
    static func prune(_ folder: String, limit: Int) {
        var files: [(name: String, bytes: Int, time: Int)] = []
        for name in (try? Folder.entryNames(in: folder)) ?? [] where name.hasSuffix(".jpg") {
            var status = stat()
            guard stat("\(folder)/\(name)", &status) == 0 else { continue }
            files.append((name, Int(status.st_size), status.st_mtim.tv_sec))
        }
        var total = files.reduce(0) { $0 + $1.bytes }
        guard total > limit else { return }
        for file in files.sorted(by: { $0.time < $1.time }) where total > limit {
            if unlink("\(folder)/\(file.name)") == 0 { total -= file.bytes }
        }
    }

    static func response(_ jpeg: [UInt8]) -> WebServer.Response {
        WebServer.Response(status: 200, contentType: "image/jpeg", body: jpeg)
    }

    private func remember(_ key: String, _ jpeg: [UInt8]) {
        recent.withLock { recent in
            recent.removeAll { $0.key == key }
            recent.insert((key, jpeg), at: 0)
            if recent.count > Self.recentLimit { recent.removeLast() }
        }
    }

    /// The smallest rendition of the photo in the cache's mirror of the library, when one is there.
    private func rendition(of path: String) -> String? {
        guard let renditionCache, path.hasPrefix(libraryRoot + "/") else { return nil }
        let relative = String(path.dropFirst(libraryRoot.count))
        let mirror = renditionCache + PathText.directory(of: relative)
        let name = relative.split(separator: "/").last.map(String.init) ?? relative
        let stem = name.lastIndex(of: ".").map { String(name[..<$0]) } ?? name
        guard let names = try? Library.photoNames(in: mirror) else { return nil }
        let sizes = names.compactMap { file -> (String, Int)? in
            guard let parts = Library.renditionParts(of: file), parts.name == stem else { return nil }
            return (file, parts.size.width * parts.size.height)
        }
        return sizes.min { $0.1 < $1.1 }.map { "\(mirror)/\($0.0)" }
    }

    /// FNV-1a of the path with the file's size and modification time: a new key whenever the file changes.
    static func key(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return
            "\(pathHash(path))-\(status.st_size)-\(status.st_mtim.tv_sec)\(status.st_mtim.tv_nsec / 1_000_000)"
    }

    /// FNV-1a of the path: every thumbnail of one photo starts with it.
    static func pathHash(_ path: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
