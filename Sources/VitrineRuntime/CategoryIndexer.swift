import VitrineCore
import VitrineImage

/// Lists a category's slides for the player, leaving out files still being written, (for `newest` order) dates
/// each slide by its EXIF capture date, else its file time, and (with `pairPortraits`) pairs portrait photos. The
/// slides come in the show's order (`newest` first, else by name), so the playlist's sort finds them sorted.
///
/// Runs on the index worker: it may take seconds on a large library, and asks `isCancelled` between batches of
/// photos so a category switched away from stops being read.
struct CategoryIndexer {
    let library: Library
    /// Two portrait photos in a row become one slide (on a landscape canvas only; the caller decides).
    var pairPortraits = false
    /// Where the header caches are kept across restarts; nil reads every header once per index.
    var cacheDirectory: String?
    var isCancelled: () -> Bool = { false }

    /// Headers are looked at in batches this big between two questions to `isCancelled`.
    static let batch = 256

    struct Index {
        var slides: [Slide]
        /// Headers read from photos, and facts taken from the cache instead.
        var headersRead = 0
        var cacheHits = 0
        /// Why the cache could not be saved (for one log line).
        var cacheProblem: String?
    }

    /// The index; nil when it was cancelled.
    func index(of category: LibraryCategory, order: PlaybackOrder, excluding beingWritten: Set<String>)
        throws(FileError) -> Index?
    {
        guard var slides = try library.slides(in: category, isCancelled: isCancelled) else { return nil }
        if !beingWritten.isEmpty {
            slides = slides.compactMap { slide in
                var slide = slide
                if let original = slide.original, beingWritten.contains(original) { slide.original = nil }
                slide.renditions.removeAll { beingWritten.contains($0.path) }
                return slide.files.isEmpty ? nil : slide
            }
        }
        guard order == .newest || pairPortraits else { return Index(slides: slides) }
        let cache = HeaderCache(directory: cacheDirectory, category: category)
        // Each header is read at most once per index, though dating and pairing both look at originals.
        let renderer = FrameRenderer(budget: MemoryBudget(limit: 1 << 20))
        var known: [String: (facts: HeaderCache.Facts?, modified: Double)?] = [:]
        let remember = order == .newest && pairPortraits
        let look = { (path: String) -> (facts: HeaderCache.Facts?, modified: Double)? in
            if remember, let found = known[path] { return found }
            let found = cache.facts(of: path) { file in
                guard let header = try? renderer.header(of: file) else { return nil }
                return HeaderCache.Facts(
                    captureDate: header.dateTimeOriginal.flatMap(CaptureDate.seconds(fromEXIF:)),
                    uprightSize: header.displayedSize)
            }
            if remember { known[path] = found }
            return found
        }
        if order == .newest {
            for index in slides.indices {
                if index % Self.batch == 0, isCancelled() { return nil }
                slides[index].timestamp = Self.timestamp(of: slides[index], look: look)
            }
            slides.sort(by: Slide.newerFirst)
        }
        if pairPortraits {
            // Pairs are of photos next to each other in the show's order (shuffle shuffles the pairs).
            var looked = 0
            var cancelled = false
            slides = PortraitPairing.pair(slides) { path in
                looked += 1
                if looked % Self.batch == 0, isCancelled() { cancelled = true }
                return cancelled ? nil : look(path)?.facts?.uprightSize
            }
            if cancelled { return nil }
        }
        return Index(
            slides: slides, headersRead: cache.headersRead, cacheHits: cache.entriesReused, cacheProblem: cache.save())
    }

    /// The first capture date among the slide's files, else the first file's modification time.
    static func timestamp(
        of slide: Slide, look: (String) -> (facts: HeaderCache.Facts?, modified: Double)?
    ) -> Double {
        var modified: Double?
        for file in slide.files {
            guard let found = look(file) else { continue }
            if let date = found.facts?.captureDate { return date }
            if modified == nil { modified = found.modified }
        }
        return modified ?? 0
    }
}
