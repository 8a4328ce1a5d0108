import CFreeType
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Short lines of text (the category banner, the pause sign) rendered with FreeType into a coverage strip the
/// size of the text, not a frame. FreeType is loaded by the first renderer made (`LazyLibrary.freetype`): a show
/// that never puts text on screen never maps it.
public final class TextRenderer {
    public struct Strip: Equatable, Sendable {
        public var size: Size
        /// Coverage 0...255, row by row.
        public var coverage: [UInt8]
    }

    /// DejaVu Sans from Debian's fonts-dejavu-core.
    public static let defaultFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

    private var library: FT_Library?
    private var face: FT_Face?
    public let pixelHeight: Int

    /// Throws, naming the font or the library, when FreeType or the font cannot be loaded; the show then goes on
    /// without text. Reads the library (the first time) and the font from disk.
    public init(fontPath: String = TextRenderer.defaultFont, pixelHeight: Int) throws(FileError) {
        self.pixelHeight = pixelHeight
        do {
            try LazyLibrary.freetype.load()
        } catch {
            throw FileError(path: error.soname, operation: "load it (\(error.reason))", errno: ELIBACC)
        }
        guard FT_Init_FreeType(&library) == 0, let library else {
            throw FileError(path: fontPath, operation: "start FreeType", errno: ENOMEM)
        }
        guard FT_New_Face(library, fontPath, 0, &face) == 0, let face else {
            FT_Done_FreeType(library)
            self.library = nil
            // FreeType reports its own codes; a font that cannot be loaded is, for the user, one that is not there.
            throw FileError(path: fontPath, operation: "load the font", errno: ENOENT)
        }
        FT_Set_Pixel_Sizes(face, 0, FT_UInt(pixelHeight))
    }

    deinit {
        if let face { FT_Done_Face(face) }
        if let library { FT_Done_FreeType(library) }
    }

    /// The text as coverage, one line, with the font's ascent above the baseline and descent below.
    public func render(_ text: String) -> Strip {
        guard let face else { return Strip(size: Size(width: 1, height: 1), coverage: [0]) }
        let ascent = Int(face.pointee.size.pointee.metrics.ascender >> 6)
        let descent = -Int(face.pointee.size.pointee.metrics.descender >> 6)
        let height = max(1, ascent + descent)
        var width = 0
        for scalar in text.unicodeScalars where vitrine_ft_render_char(face, FT_ULong(scalar.value)) == 0 {
            width += Int(face.pointee.glyph.pointee.advance.x >> 6)
        }
        width = max(1, width)
        var coverage = [UInt8](repeating: 0, count: width * height)
        var penX = 0
        for scalar in text.unicodeScalars where vitrine_ft_render_char(face, FT_ULong(scalar.value)) == 0 {
            let glyph = face.pointee.glyph.pointee
            let bitmap = glyph.bitmap
            let left = penX + Int(glyph.bitmap_left)
            let top = ascent - Int(glyph.bitmap_top)
            if let buffer = bitmap.buffer {
                for row in 0..<Int(bitmap.rows) {
                    let y = top + row
                    guard y >= 0 && y < height else { continue }
                    for column in 0..<Int(bitmap.width) {
                        let x = left + column
                        guard x >= 0 && x < width else { continue }
                        let value = buffer[row * Int(bitmap.pitch) + column]
                        coverage[y * width + x] = max(coverage[y * width + x], value)
                    }
                }
            }
            penX += Int(glyph.advance.x >> 6)
        }
        return Strip(size: Size(width: width, height: height), coverage: coverage)
    }
}
