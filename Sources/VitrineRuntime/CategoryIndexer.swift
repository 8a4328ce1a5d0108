import VitrineCore
import VitrineImage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Lists a category's slides for the player, leaving out files still being written, (for `newest` order) dates
/// each slide by its EXIF capture date, else its file time, and (with `pairPortraits`) pairs portrait photos.
struct CategoryIndexer {
    let library: Library
    /// Two portrait photos in a row become one slide (on a landscape canvas only; the caller decides).
    var pairPortraits = false

    func slides(of category: LibraryCategory, order: PlaybackOrder, excluding beingWritten: Set<String>)
        throws(FileError) -> [Slide]
    {
        var slides = try library.slides(in: category)
        if !beingWritten.isEmpty {
            slides = slides.compactMap { slide in
                var slide = slide
                if let original = slide.original, beingWritten.contains(original) { slide.original = nil }
                slide.renditions.removeAll { beingWritten.contains($0.path) }
                return slide.files.isEmpty ? nil : slide
            }
        }
        // Each header is read at most once per index, though dating and pairing both look at originals.
        let renderer = FrameRenderer(budget: MemoryBudget(limit: 1 << 20))
        var headers: [String: JPEGHeader?] = [:]
        let header = { (path: String) -> JPEGHeader? in
            if let known = headers[path] { return known }
            let read = try? renderer.header(of: path)
            headers[path] = read
            return read
        }
        if order == .newest {
            for index in slides.indices { slides[index].timestamp = Self.timestamp(of: slides[index], header: header) }
        }
        if pairPortraits {
            // Pairs are of photos next to each other in the show's order (shuffle shuffles the pairs).
            if order == .newest { slides.sort(by: Slide.newerFirst) }
            slides = PortraitPairing.pair(slides) { header($0)?.displayedSize }
        }
        return slides
    }

    static func timestamp(of slide: Slide, header: (String) -> JPEGHeader?) -> Double {
        for file in slide.files {
            if let text = header(file)?.dateTimeOriginal,
                let seconds = CaptureDate.seconds(fromEXIF: text)
            {
                return seconds
            }
        }
        var status = stat()
        guard let file = slide.files.first, stat(file, &status) == 0 else { return 0 }
        return Double(status.st_mtim.tv_sec)
    }
}
