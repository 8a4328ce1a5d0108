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
        if order == .newest {
            let renderer = FrameRenderer(budget: MemoryBudget(limit: 1 << 20))
            for index in slides.indices { slides[index].timestamp = Self.timestamp(of: slides[index], renderer) }
        }
        if pairPortraits {
            // Pairs are of photos next to each other in the show's order (shuffle shuffles the pairs).
            if order == .newest {
                slides.sort {
                    $0.timestamp != $1.timestamp
                        ? $0.timestamp > $1.timestamp : NaturalOrder.less($0.id.name, $1.id.name)
                }
            }
            let renderer = FrameRenderer(budget: MemoryBudget(limit: 1 << 20))
            slides = PortraitPairing.pair(slides) { slide in
                Self.uprightSize(of: slide, renderer).map(PortraitPairing.isPortrait) ?? false
            }
        }
        return slides
    }

    /// A rendition's size is in its name (renditions are stored upright); an original's is in its header.
    static func uprightSize(of slide: Slide, _ renderer: FrameRenderer) -> Size? {
        if let largest = slide.renditions.last { return largest.size }
        guard let original = slide.original else { return nil }
        return try? renderer.header(of: original).displayedSize
    }

    static func timestamp(of slide: Slide, _ renderer: FrameRenderer) -> Double {
        for file in slide.files {
            if let text = try? renderer.header(of: file).dateTimeOriginal,
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
