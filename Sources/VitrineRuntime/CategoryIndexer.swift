import VitrineCore
import VitrineImage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Lists a category's slides for the player, leaving out files still being written, and (for `newest` order)
/// dates each slide by its EXIF capture date, else its file time.
struct CategoryIndexer {
    let library: Library

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
        return slides
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
