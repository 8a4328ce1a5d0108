import VitrineCore
import VitrineImage
import VitrinePlatform

/// Lists a category's slides for the player, leaving out files still being written and (with `minRating`) photos
/// rated lower; for `newest` order dates each slide by its EXIF capture date, else its file time; for `shuffle`
/// notes what the selection engine weighs (capture date, shape, rating, new since the last index); and (with
/// `pairPortraits`, in the other orders) pairs portrait photos next to each other.
///
/// Runs on the index worker: it may take seconds on a large library, and asks `isCancelled` between batches of
/// photos so a category switched away from stops being read.
struct CategoryIndexer {
    let library: Library
    /// Two portrait photos in a row become one slide (on a landscape canvas only; the caller decides).
    var pairPortraits = false
    /// Where the header caches are kept across restarts; nil reads every header once per index.
    var cacheDirectory: String?
    /// Where renditions made in the background are (mirroring the library's folders).
    var renditionCache: String?
    /// Marks each header as it is read, and leaves out the files set aside (a header whose parsing crashed the
    /// player twice).
    var crashGuard: CrashGuard?
    var isCancelled: () -> Bool = { false }

    /// Headers are looked at in batches this big between two questions to `isCancelled`.
    static let batch = 256

    struct Index {
        var catalog: SlideCatalog
        /// Headers read from photos, and facts taken from the cache instead.
        var headersRead = 0
        var cacheHits = 0
        /// Why the cache could not be saved (for one log line).
        var cacheProblem: String?
    }

    /// The index; nil when it was cancelled. `minRating` leaves out photos rated lower (an unrated photo counts as
    /// 0 stars, as in Lightroom).
    func index(
        of category: LibraryCategory, order: PlaybackOrder, minRating: Int? = nil, excluding beingWritten: Set<String>
    ) throws(FileError) -> Index? {
        guard
            var catalog = try library.catalog(of: category, renditionCache: renditionCache, isCancelled: isCancelled)
        else { return nil }
        if !beingWritten.isEmpty { Self.leaveOut(beingWritten, from: &catalog) }
        // `shuffle` draws by capture date, rating and shape; `newest` sorts by date; pairs need shapes.
        guard order != .name || pairPortraits || minRating != nil else { return Index(catalog: catalog) }
        let cache = HeaderCache(directory: cacheDirectory, category: category)
        let renderer = FrameRenderer(budget: MemoryBudget(limit: 1 << 20))
        var readNow = false
        let look = { (path: String) -> (facts: HeaderCache.Facts?, modified: Double)? in
            cache.facts(of: path) { file in
                readNow = true
                let read = { try? renderer.header(of: file) }
                guard let header = crashGuard.map({ $0.guarding(file, on: .index, read) }) ?? read() else {
                    return nil
                }
                return HeaderCache.Facts(
                    captureDate: header.dateTimeOriginal.flatMap(CaptureDate.seconds(fromEXIF:)),
                    uprightSize: header.displayedSize, rating: header.rating)
            }
        }
        // Headers are looked at in the cache's order (each slide's first file's path), so the cache is read and
        // written as a stream; the sizes are kept for pairing, which goes in the show's order.
        let byPath = catalog.byName.sorted {
            catalog.firstFileKey(at: $0).lexicographicallyPrecedes(catalog.firstFileKey(at: $1))
        }
        var sizes: [Int32: Size] = [:]
        var unrated: Set<Int32> = []
        for (number, index) in byPath.enumerated() {
            if number % Self.batch == 0, isCancelled() { return nil }
            let slide = catalog.slide(at: index)
            guard let first = slide.files.first else { continue }
            readNow = false
            let found = look(first)
            let size = slide.renditions.last?.size ?? found?.facts?.uprightSize
            if let minRating, (found?.facts?.rating ?? 0) < minRating { unrated.insert(index) }
            switch order {
            case .newest:
                catalog.setTimestamp(Self.timestamp(of: slide, first: found, look: look), at: index)
            case .shuffle:
                // A file's time says when it was copied, not taken: only a capture date counts for the draw.
                let captured = found?.facts?.captureDate
                if let captured { catalog.setTimestamp(captured, at: index) }
                catalog.setTraits(
                    SlideTraits(
                        // A clip plays alone: it is never half of a pair.
                        captured: captured != nil,
                        portrait: !slide.isClip && (size.map(PortraitPairing.isPortrait) ?? false),
                        fresh: readNow && cache.knewLibrary, rating: found?.facts?.rating),
                    at: index)
            case .name:
                break
            }
            if pairPortraits, order != .shuffle, slide.renditions.isEmpty, !slide.isClip, let size {
                sizes[index] = size
            }
        }
        if !unrated.isEmpty { catalog.remove(unrated) }
        // `shuffle` pairs as it draws (SelectionEngine); the other orders pair photos next to each other.
        if pairPortraits, order != .shuffle {
            let inOrder = order == .newest ? catalog.byName.sorted { catalog.newerFirst($0, $1) } : catalog.byName
            let paired = PortraitPairing.pair(inOrder.map { catalog.slide(at: $0) }) { slide in
                guard let size = slide.renditions.last?.size ?? catalog.index(of: slide.id).flatMap({ sizes[$0] })
                else { return false }
                return PortraitPairing.isPortrait(size)
            }
            var pairedCatalog = SlideCatalog(category: category.name, folder: category.path)
            pairedCatalog.append(paired)
            catalog = pairedCatalog
        }
        return Index(
            catalog: catalog, headersRead: cache.headersRead, cacheHits: cache.entriesReused,
            cacheProblem: cache.save())
    }

    /// Files still being written are not shown yet: a slide loses them, and goes when it has no other file.
    static func leaveOut(_ beingWritten: Set<String>, from catalog: inout SlideCatalog) {
        // A slide with several files still being written is changed once, whatever their number.
        var changed: [Int32: Slide] = [:]
        let prefix = catalog.folder + "/"
        for path in beingWritten where path.hasPrefix(prefix) {
            let relative = String(path.dropFirst(prefix.count))
            let folder = relative.lastIndex(of: "/").map { String(relative[...$0]) } ?? ""
            let fileName = String(relative.dropFirst(folder.count))
            let stem =
                Library.renditionParts(of: fileName)?.name
                ?? String(fileName[..<(fileName.lastIndex(of: ".") ?? fileName.endIndex)])
            guard let index = catalog.index(of: SlideID(category: catalog.category, name: folder + stem)) else {
                continue
            }
            var slide = changed[index] ?? catalog.slide(at: index)
            if slide.original == path { slide.original = nil }
            slide.renditions.removeAll { $0.path == path }
            changed[index] = slide
        }
        catalog.remove(Set(changed.filter { $0.value.files.isEmpty }.keys))
        catalog.append(changed.values.filter { !$0.files.isEmpty })
    }

    /// The first capture date among the slide's files, else the first file's modification time. `first` is what
    /// was found for the first file.
    static func timestamp(
        of slide: Slide, first: (facts: HeaderCache.Facts?, modified: Double)?,
        look: (String) -> (facts: HeaderCache.Facts?, modified: Double)?
    ) -> Double {
        if let date = first?.facts?.captureDate { return date }
        var modified = first?.modified
        for file in slide.files.dropFirst() {
            guard let found = look(file) else { continue }
            if let date = found.facts?.captureDate { return date }
            if modified == nil { modified = found.modified }
        }
        return modified ?? 0
    }
}
