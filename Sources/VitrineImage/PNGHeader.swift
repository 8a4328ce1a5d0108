import VitrineCore

/// What Vitrine needs to know about a PNG before decoding it, from the chunks before the image data: the IHDR, and
/// whether there is transparency, a colour profile and EXIF (whose orientation turns the picture).
///
/// eXIf is read only before the first IDAT, as browsers do: one after the image data would need the whole file
/// walked for every photo of an index.
public struct PNGHeader: Equatable, Sendable {
    public var size: Size
    public var bitDepth: Int
    /// PNG colour type: 0 grey, 2 RGB, 3 palette, 4 grey and alpha, 6 RGBA.
    public var colorType: Int
    public var interlaced: Bool
    /// A tRNS chunk: transparency for grey, RGB or palette images.
    public var hasTransparencyChunk: Bool
    public var hasICCProfile: Bool
    public var animated: Bool
    public var exif: ExifReader.Fields?

    public var hasAlpha: Bool { colorType == 4 || colorType == 6 || hasTransparencyChunk }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// Ancillary chunks Vitrine reads (eXIf) are refused above this; larger ones are skipped unread.
    static let largestReadChunk = 1 << 20
    /// Ancillary chunks libspng keeps (text, profiles) are capped at this, so a PNG stuffed with metadata cannot
    /// grow the decoder past what the budget was told.
    public static let chunkCacheBytes = 4 << 20
    /// A real PNG has a handful of chunks before its image data; bound the walk against crafted files.
    static let maximumChunks = 4096

    /// Bytes per row of the stored image, before any conversion.
    public var storedRowBytes: Int {
        let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][colorType] ?? 4
        return Int.saturatingProduct(size.width, channels, bitDepth).saturatingPlus(7) / 8
    }

    /// Bytes libspng and the row conversion keep while decoding: two stored rows (the row and the one above, for
    /// the filters), a converted RGBA row, zlib's window and state, and the ancillary-chunk cache limit; an
    /// interlaced image is decoded whole (RGBA, 4 bytes a pixel) since its rows arrive in seven passes.
    public var decoderWorkspaceBytes: Int {
        let rows = Int.saturatingSum(
            Int.saturatingProduct(3, storedRowBytes.saturatingPlus(1)), size.width.saturatingTimes(8))
        let whole = interlaced ? size.pixelCount.saturatingTimes(4) : 0
        return Int.saturatingSum(rows, whole, Self.chunkCacheBytes, 64 << 10)
    }

    public static func parse(file: String, read: (Int, Int) throws(ImageError) -> [UInt8]) throws(ImageError)
        -> PNGHeader
    {
        func fail(_ what: String) -> ImageError { ImageError(file: file, reason: .damaged(.png, what)) }
        func unsupported(_ what: String) -> ImageError {
            ImageError(file: file, reason: .unsupportedVariant(.png, what))
        }
        let start = try read(0, 8 + 8 + 13)
        if start.isEmpty { throw ImageError(file: file, reason: .empty) }
        guard start.starts(with: signature) else { throw fail("no PNG signature") }
        guard start.count == 29 else { throw fail("file ends inside the header (truncated)") }
        guard start[12..<16].elementsEqual("IHDR".utf8), bigEndian(start, 8) == 13 else {
            throw fail("the first chunk is not a 13-byte IHDR")
        }
        let width = bigEndian(start, 16)
        let height = bigEndian(start, 20)
        let depth = Int(start[24])
        let colorType = Int(start[25])
        guard width > 0, height > 0, width <= Int(Int32.max), height <= Int(Int32.max) else {
            throw fail("image size \(width)x\(height)")
        }
        let depths: [Int: [Int]] = [0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16]]
        guard let allowed = depths[colorType] else { throw fail("colour type \(colorType)") }
        guard allowed.contains(depth) else { throw fail("bit depth \(depth) for colour type \(colorType)") }
        guard start[26] == 0, start[27] == 0 else { throw unsupported("compression or filter method not 0") }
        guard start[28] <= 1 else { throw fail("interlace method \(start[28])") }
        var header = PNGHeader(
            size: Size(width: width, height: height), bitDepth: depth, colorType: colorType,
            interlaced: start[28] == 1, hasTransparencyChunk: false, hasICCProfile: false, animated: false,
            exif: nil)
        var sawPalette = false
        var position = 8 + 8 + 13 + 4
        for _ in 0..<maximumChunks {
            let chunk = try read(position, 8)
            guard chunk.count == 8 else { throw fail("file ends before the image data (truncated)") }
            let length = bigEndian(chunk, 0)
            guard length <= Int(Int32.max) else { throw fail("chunk at byte \(position) has length \(length)") }
            let type = String(decoding: chunk[4..<8], as: UTF8.self)
            switch type {
            case "IDAT":
                if colorType == 3 && !sawPalette { throw fail("palette image with no PLTE before IDAT") }
                return header
            case "IEND": throw fail("IEND before any image data")
            case "PLTE": sawPalette = true
            case "tRNS": header.hasTransparencyChunk = true
            case "iCCP": header.hasICCProfile = true
            case "acTL": header.animated = true
            case "eXIf" where length <= largestReadChunk && header.exif == nil:
                let block = try read(position + 8, length)
                header.exif = ExifReader.read(block: block[...])
            default: break
            }
            position += 12 + length
        }
        throw fail("too many chunks before the image data")
    }

    static func bigEndian(_ bytes: [UInt8], _ offset: Int) -> Int {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
    }
}
