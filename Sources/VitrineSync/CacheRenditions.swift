import VitrineCore
import VitrineImage
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The panel's rendition kept in the cache instead of the photo (`keep: rendition`): a 5 MB HEIC from a phone is a
/// few hundred KB of JPEG at the size the panel shows it, so a 20,000-photo album fits a frame's SD card. Named
/// `NAME@WxH.jpg` as the library's renditions are, so the player reads it as the photo itself. A photo no larger
/// than the panel needs is kept as it is.
final class CacheRenditions {
    /// The device profile's rendition canvas and fit, as `RenditionPlan` takes them.
    let canvas: Size
    let fit: Fit
    private let maxMegapixels: Double
    private let writer: RenditionWriter

    static let quality = 88

    init(canvas: Size, fit: Fit, maxMegapixels: Double) {
        self.canvas = canvas
        self.fit = fit
        self.maxMegapixels = maxMegapixels
        // A quarter of what the board has free, at least 64 MiB: the sync's process runs beside the player.
        writer = RenditionWriter(budget: MemoryBudget(limit: max(64 << 20, ProcessMemory.availableBytes() / 4)))
    }

    /// Writes the rendition of the fetched photo in `part` beside `original` (the path the photo would take) with
    /// the server's time; its path, or nil when the photo is kept as it is.
    func make(from part: String, original: String, modified: Int64?) throws(ImageError) -> String? {
        let header = try writer.header(of: part)
        guard Double(header.size.pixelCount) <= maxMegapixels * 1_000_000,
            let size = RenditionPlan.size(upright: header.displayedSize, canvas: canvas, fit: fit)
        else { return nil }
        let name = original.split(separator: "/").last.map(String.init) ?? original
        let destination = "\(PathText.directory(of: original))/\(RenditionPlan.fileName(original: name, size: size))"
        try writer.write(
            original: part, header: header, size: size, to: destination, quality: Self.quality,
            maxMegapixels: maxMegapixels)
        if let modified {
            var times = [timespec(tv_sec: Int(modified), tv_nsec: 0), timespec(tv_sec: Int(modified), tv_nsec: 0)]
            _ = utimensat(AT_FDCWD, destination, &times, 0)
        }
        return destination
    }
}
