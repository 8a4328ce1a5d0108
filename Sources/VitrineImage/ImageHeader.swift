import VitrineCore

/// What Vitrine knows about a photo before decoding it, whatever its format: the format (from the content), the
/// stored size, the EXIF orientation, date and GPS position, and what the decoder will need. The format's own header is kept
/// beside for its decoder.
public struct ImageHeader: Equatable, Sendable {
    public enum Details: Equatable, Sendable {
        case jpeg(JPEGHeader)
        case png(PNGHeader)
        case webp(WebPHeader)
        case heif(HEIFHeader)
        case clip(ClipHeader)
    }

    public var details: Details
    /// The stored size (before orientation).
    public var size: Size
    public var orientation: Orientation
    public var dateTimeOriginal: String?
    /// `xmp:Rating` (−1 to 5) from the photo's XMP packet, when it has one.
    public var rating: Int?
    /// Where it was taken (EXIF GPS), for `{place}` captions.
    public var location: GeoCoordinate?
    public var hasAlpha: Bool
    /// Bytes the format's decoder keeps while decoding, besides the rows Vitrine hands on.
    public var decoderWorkspaceBytes: Int

    public var format: ImageFormat {
        switch details {
        case .jpeg: return .jpeg
        case .png: return .png
        case .webp: return .webp
        case .heif(let header): return header.avif ? .avif : .heif
        case .clip: return .clip
        }
    }

    /// The upright size, after EXIF orientation.
    public var displayedSize: Size { orientation.displayedSize(ofStored: size) }

    public var jpeg: JPEGHeader? {
        if case .jpeg(let header) = details { return header }
        return nil
    }

    /// The header's facts in a few words for messages: "progressive JPEG", "interlaced PNG", "lossless WebP".
    public var kind: String {
        switch details {
        case .jpeg(let header): return header.process == .progressive ? "progressive JPEG" : "JPEG"
        case .png(let header): return header.interlaced ? "interlaced PNG" : "PNG"
        case .webp(let header):
            return (header.animated ? "animated " : "") + (header.lossless ? "lossless WebP" : "WebP")
        case .heif(let header):
            return (header.bitDepth > 8 ? "\(header.bitDepth)-bit " : "") + (header.avif ? "AVIF" : "HEIF")
        case .clip(let header): return (header.bitDepth > 8 ? "\(header.bitDepth)-bit " : "") + header.kind + " clip"
        }
    }

    public init(_ jpeg: JPEGHeader) {
        details = .jpeg(jpeg)
        size = jpeg.size
        orientation = jpeg.orientation
        dateTimeOriginal = jpeg.dateTimeOriginal
        rating = jpeg.rating
        location = jpeg.location
        hasAlpha = false
        decoderWorkspaceBytes = jpeg.decoderWorkspaceBytes
    }

    public init(_ png: PNGHeader) {
        self.init(
            .png(png), size: png.size, exif: png.exif, hasAlpha: png.hasAlpha,
            decoderWorkspaceBytes: png.decoderWorkspaceBytes)
    }

    public init(_ webp: WebPHeader) {
        // An animation's first frame may not cover its canvas, which starts transparent.
        self.init(
            .webp(webp), size: webp.size, exif: webp.exif, hasAlpha: webp.hasAlpha || webp.animated,
            decoderWorkspaceBytes: webp.decoderWorkspaceBytes)
    }

    /// A format whose orientation, date and position come from an EXIF block (PNG eXIf, WebP EXIF); upright without one.
    private init(
        _ details: Details, size: Size, exif: ExifReader.Fields?, hasAlpha: Bool, decoderWorkspaceBytes: Int
    ) {
        self.details = details
        self.size = size
        orientation = exif?.orientation ?? .up
        dateTimeOriginal = exif?.dateTimeOriginal
        location = exif?.location
        self.hasAlpha = hasAlpha
        self.decoderWorkspaceBytes = decoderWorkspaceBytes
    }

    /// The orientation is the HEIF transforms', which win over EXIF's (upright when libheif applies them).
    public init(_ heif: HEIFHeader) {
        details = .heif(heif)
        size = heif.size
        orientation = heif.orientation
        dateTimeOriginal = heif.exif?.dateTimeOriginal
        rating = heif.rating
        location = heif.exif?.location
        hasAlpha = heif.hasAlpha
        decoderWorkspaceBytes = heif.decoderWorkspaceBytes
    }

    /// A clip's header: its first picture is the still (its size before the display matrix's turn).
    public init(_ clip: ClipHeader) {
        details = .clip(clip)
        size = clip.size
        orientation = clip.orientation
        dateTimeOriginal = clip.recorded
        hasAlpha = false
        decoderWorkspaceBytes = clip.decoderWorkspaceBytes
    }

    public var clip: ClipHeader? {
        if case .clip(let header) = details { return header }
        return nil
    }

    /// No photo larger than this is read, whatever `maxMegapixels` says (it goes up to 1000): a bound on every
    /// size computed from the header, which a crafted file can set to 2^31 on a side.
    public static let largestPixelCount = 1_000_000_000

    /// Reads the header of a file of `fileBytes` bytes through `read(offset, count)`, which returns at most `count`
    /// bytes (fewer at the end of the file); the format is told by the first bytes. HEIF and AVIF boxes are read
    /// through `heif` (given the format and `read`), which needs libheif; without it they are refused.
    public static func parse(
        file: String, fileBytes: Int, read: (Int, Int) throws(ImageError) -> [UInt8],
        heif: ((ImageFormat, (Int, Int) throws(ImageError) -> [UInt8]) throws(ImageError) -> HEIFHeader)? = nil,
        clip: (() throws(ImageError) -> ClipHeader)? = nil
    ) throws(ImageError) -> ImageHeader {
        let start = try read(0, ImageFormat.signatureLength)
        if start.isEmpty { throw ImageError(file: file, reason: .empty) }
        // The size a file declares is bounded before anything is computed from it.
        func bounded(_ size: Size) throws(ImageError) -> Size {
            // libheif reports what the boxes say; a side of 0 would make every scale factor infinite.
            guard size.width > 0, size.height > 0 else {
                let format = ImageFormat.detect(start) ?? .heif
                throw ImageError(file: file, reason: .damaged(format, "image size \(size)"))
            }
            guard size.pixelCount <= largestPixelCount else {
                throw ImageError(
                    file: file,
                    reason: .tooManyPixels(size, limitMegapixels: Double(largestPixelCount / 1_000_000)))
            }
            return size
        }
        switch ImageFormat.detect(start) {
        case .jpeg:
            let header = try JPEGHeader.parse(file: file, read: read)
            _ = try bounded(header.size)
            return ImageHeader(header)
        case .png:
            let header = try PNGHeader.parse(file: file, read: read)
            _ = try bounded(header.size)
            return ImageHeader(header)
        case .webp:
            let header = try WebPHeader.parse(file: file, fileBytes: fileBytes, read: read)
            _ = try bounded(header.size)
            return ImageHeader(header)
        case .heif, .avif:
            guard let heif, let format = ImageFormat.detect(start) else {
                throw ImageError(file: file, reason: .unsupportedVariant(.heif, "no HEIF reader here"))
            }
            let header = try heif(format, read)
            _ = try bounded(header.size)
            return ImageHeader(header)
        case .clip:
            guard let clip else {
                throw ImageError(file: file, reason: .unsupportedVariant(.clip, "no clip reader here"))
            }
            return ImageHeader(try clip())
        case nil: throw ImageError(file: file, reason: .unknownFormat(ImageFormat.describeUnknown(start)))
        }
    }
}
