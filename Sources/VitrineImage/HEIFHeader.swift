import VitrineCore

/// What Vitrine needs to know about a HEIF (HEIC) or AVIF photo before decoding it: the primary image's size, its
/// transforms, alpha, bit depth, a colour profile, and from EXIF the capture date.
///
/// A grid (how phones store their photos) is decoded tile by tile, so its size is the canvas cropped by its clean
/// aperture and its `irot`/`imir` are the orientation the pipeline applies. Any other image is decoded whole by
/// libheif, which applies the transforms itself: the size is the shown size and the orientation upright. Either
/// way the HEIF transforms win over any EXIF orientation, as the HEIF specification has it.
public struct HEIFHeader: Equatable, Sendable {
    /// The decoded size: the shown size for a whole decode, the cropped canvas for a grid.
    public var size: Size
    public var orientation: Orientation = .up
    public var avif: Bool
    public var hasAlpha: Bool
    public var bitDepth: Int
    public var hasColorProfile: Bool
    public var exif: ExifReader.Fields?
    /// `xmp:Rating` from the XMP packet, when there is one.
    public var rating: Int?
    /// The colour space the primary image declares (read with the header, so no decoder opens the file for it).
    public var colorProfile: ColorProfile?
    /// The grid decoded tile by tile; nil for an image libheif decodes whole.
    public var grid: HEIFGrid?
    /// The AV1 picture dav1d decodes directly; nil for an image libheif decodes.
    public var still: HEIFStill?

    public init(
        size: Size, avif: Bool, hasAlpha: Bool, bitDepth: Int, hasColorProfile: Bool, exif: ExifReader.Fields?
    ) {
        self.size = size
        self.avif = avif
        self.hasAlpha = hasAlpha
        self.bitDepth = bitDepth
        self.hasColorProfile = hasColorProfile
        self.exif = exif
    }

    /// Tiles decoded at once, each on its own thread: two of a phone's small tiles, one of a camera's large ones
    /// (Canon's HIF tiles are 3520x1600, each some 70 MiB in flight), where a second would double the memory.
    public static func tileThreads(for tileSize: Size) -> Int { tileSize.pixelCount > 1 << 20 ? 1 : 2 }

    /// Bytes the decode holds besides the rows Vitrine hands on, decoded `reduction` times smaller (a grid only).
    ///
    /// A grid: one band of tiles as 8-bit RGB (the tiles the crop touches, across, reduced), and per decoding
    /// thread one tile as libheif holds it: the codec's picture and libheif's copy of its planes, the planar RGB it
    /// converts them to and the interleaved RGB it hands out, at 16 bits a sample above 8 bits, and the codec's
    /// state. Whatever the photo's size, that is a few MiB for a phone's 512x512 tiles.
    ///
    /// A whole decode: libheif decodes the whole image (a grid pasted into one picture) as YUV, then converts it
    /// to interleaved 8-bit RGB(A); more than 8 bits a sample also passes through 16-bit planes.
    public func decoderWorkspaceBytes(reduction: Int) -> Int {
        let sampleBytes = bitDepth > 8 ? 2 : 1
        if let grid, !hasAlpha {
            let band = bandSize(grid)
            let bandBytes = Int.saturatingProduct(band.width / reduction, band.height / reduction, 3)
            let perThread = Int.saturatingProduct(grid.tileSize.pixelCount, 12, sampleBytes).saturatingPlus(2 << 20)
            return Int.saturatingSum(
                bandBytes, perThread.saturatingTimes(Self.tileThreads(for: grid.tileSize)), 1 << 20)
        }
        if let still, !hasAlpha {
            // dav1d's picture as its Y'CbCr planes (the chroma planes as the av1C says they are subsampled), the
            // coded data, and the decoder's per-frame state (motion vectors, loop filter masks, CDFs: a quarter
            // of a byte a pixel, generously).
            let pixels = still.size.pixelCount
            let planes = [pixels, pixels.saturatingTimes(3) / 2, pixels.saturatingTimes(2), pixels.saturatingTimes(3)]
            return Int.saturatingSum(
                planes[still.chroma & 3].saturatingTimes(sampleBytes), still.codedBytes, pixels / 4, 4 << 20)
        }
        let pixels = size.pixelCount
        var bytes = Int.saturatingSum(
            Int.saturatingProduct(pixels, 3, sampleBytes) / 2, pixels.saturatingTimes(hasAlpha ? 4 : 3))
        if hasAlpha { bytes = bytes.saturatingPlus(pixels.saturatingTimes(sampleBytes)) }
        if bitDepth > 8 { bytes = bytes.saturatingPlus(pixels.saturatingTimes(hasAlpha ? 8 : 6)) }
        return bytes.saturatingPlus(16 << 20)
    }

    public var decoderWorkspaceBytes: Int { decoderWorkspaceBytes(reduction: 1) }

    /// The reductions a grid can be decoded at: those that divide its tiles (1 for an image decoded whole).
    public var reductions: [Int] {
        guard let grid, !hasAlpha else { return [1] }
        return [1, 2, 4, 8].filter { grid.tileSize.width % $0 == 0 && grid.tileSize.height % $0 == 0 }
    }

    /// The band of tiles held at once: the tile columns the crop touches, one tile high.
    public func bandSize(_ grid: HEIFGrid) -> Size {
        let first = grid.crop.x / grid.tileSize.width
        let last = (grid.crop.x + grid.crop.width - 1) / grid.tileSize.width
        return Size(width: (last - first + 1) * grid.tileSize.width, height: grid.tileSize.height)
    }
}
