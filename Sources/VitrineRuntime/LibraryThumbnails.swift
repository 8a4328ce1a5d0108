import VitrineCore
import VitrineImage

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
    // @unchecked: `recent` is touched only inside `lock.withLock`; the rest never changes.
    static let side = 320
    static let recentLimit = 96

    private let budget: MemoryBudget
    private let libraryRoot: String
    private let renditionCache: String?
    private let folder: String?
    private let recent = Locked<[(key: String, jpeg: [UInt8])]>([])

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
                try? FileBytes.writeAtomically(jpeg, to: "\(folder)/\(key).jpg")
            }
            return Self.response(jpeg)
        } catch {
            return .error(422, "cannot make a thumbnail of \(path): \(error.reasonText)")
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
        let mirror = renditionCache + FileBytes.directory(of: relative)
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
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return
            "\(String(hash, radix: 16))-\(status.st_size)-\(status.st_mtim.tv_sec)\(status.st_mtim.tv_nsec / 1_000_000)"
    }
}
