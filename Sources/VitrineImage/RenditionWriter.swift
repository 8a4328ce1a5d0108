import CJPEG
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes one rendition: the original decoded (DCT-scaled), turned upright and resampled to exactly the rendition's
/// size, encoded as a baseline JPEG. It is written under a hidden temporary name in the same folder (which the
/// player ignores), flushed, then renamed over the real name, so the real name only ever holds a whole file, even
/// if the writer is killed or the power fails (rename(2) is atomic within a file system).
public final class RenditionWriter {
    private let renderer: FrameRenderer

    public init(budget: MemoryBudget) {
        renderer = FrameRenderer(budget: budget)
    }

    /// The header of an original: its upright size decides the renditions.
    public func header(of path: String) throws(ImageError) -> ImageHeader {
        try renderer.header(of: path)
    }

    /// The temporary name a rendition is written under before it takes its real name.
    public static func temporaryPath(for destination: String) -> String {
        let folder = PathText.directory(of: destination)
        let name = destination.split(separator: "/").last.map(String.init) ?? destination
        return (folder == "/" ? "" : folder) + "/.\(name).tmp"
    }

    /// Gives a rendition written under `temporary` its real name: synced first, so after a power cut the real name
    /// holds the old file or the new one, whole (a photo's JPEG, a clip's MP4).
    static func publish(_ temporary: String, as destination: String) throws(ImageError) {
        func failure(_ operation: String, _ code: Int32) -> ImageError {
            ImageError(
                file: destination, reason: .cannotWrite(FileError(path: temporary, operation: operation, errno: code)))
        }
        let file = Descriptor(taking: open(temporary, O_RDONLY | O_CLOEXEC))
        guard file.number >= 0 else { throw failure("open \(temporary)", errno) }
        guard fsync(file.number) == 0 else { throw failure("write \(temporary)", errno) }
        file.close()
        guard rename(temporary, destination) == 0 else { throw failure("rename \(temporary) to \(destination)", errno) }
        // The name too survives a power cut; a folder that cannot be synced still has a whole file under it.
        _ = FileBytes.syncFolder(of: destination)
    }

    public func write(
        original: String, header: ImageHeader, size: Size, to destination: String, quality: Int, maxMegapixels: Double
    ) throws(ImageError) {
        // `cover` on a canvas of the photo's own aspect: the whole photo, at most a pixel of rounding cropped.
        let options = RenderOptions(canvas: size, fit: .cover, maxMegapixels: maxMegapixels)
        let frame = try renderer.render(original, options: options, header: header).frame
        let temporary = Self.temporaryPath(for: destination)
        func failure(_ operation: String, _ code: Int32) -> ImageError {
            ImageError(
                file: destination, reason: .cannotWrite(FileError(path: temporary, operation: operation, errno: code)))
        }
        let file = Descriptor(taking: open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644))
        let descriptor = file.number
        guard descriptor >= 0 else { throw failure("create \(temporary)", errno) }
        var message = [CChar](repeating: 0, count: Int(JMSG_LENGTH_MAX))
        let encoded = frame.pixels.withMemoryRebound(to: UInt8.self, capacity: frame.byteCount) { bytes in
            vitrine_jpeg_encode(
                descriptor, bytes, UInt32(size.width), UInt32(size.height), size.width * 4, Int32(quality), &message)
        }
        guard encoded == 0 else {
            file.close()
            unlink(temporary)
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ImageError(file: destination, reason: .encodeFailed(text))
        }
        file.close()
        do throws(ImageError) {
            try Self.publish(temporary, as: destination)
        } catch {
            unlink(temporary)
            throw error
        }
    }
}
