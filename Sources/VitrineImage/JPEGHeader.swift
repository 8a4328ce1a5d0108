import VitrineCore

/// What Vitrine needs to know about a JPEG before decoding it, read from its markers alone (never the image data).
public struct JPEGHeader: Equatable, Sendable {
    public enum Process: String, Sendable {
        case baseline, extendedSequential = "extended sequential", progressive, lossless, hierarchical
    }

    public enum ColorModel: String, Sendable {
        case gray, ycbcr = "YCbCr", rgb = "RGB", cmyk = "CMYK", ycck = "YCCK"
    }

    public struct Component: Equatable, Sendable {
        public var horizontalSampling: Int
        public var verticalSampling: Int
    }

    /// The stored size (before orientation).
    public var size: Size
    public var process: Process
    public var arithmetic: Bool
    public var precision: Int
    public var components: [Component]
    /// The Adobe APP14 transform flag when present (0 = none/CMYK, 1 = YCbCr, 2 = YCCK).
    public var adobeTransform: Int?
    public var orientation: Orientation
    public var dateTimeOriginal: String?
    /// `xmp:Rating` from the XMP packet (APP1), when there is one.
    public var rating: Int?
    /// Where it was taken, from the EXIF GPS tags.
    public var location: GeoCoordinate?
    /// Where the embedded ICC profile's pieces are (APP2 `ICC_PROFILE` segments), in the order to join them.
    public var iccChunks: [Range<Int>] = []

    /// The upright size, after EXIF orientation.
    public var displayedSize: Size { orientation.displayedSize(ofStored: size) }

    public var colorModel: ColorModel {
        switch components.count {
        case 1: return .gray
        case 4: return adobeTransform == 2 ? .ycck : .cmyk
        default: return adobeTransform == 0 ? .rgb : .ycbcr
        }
    }

    /// Bytes libjpeg keeps for the whole image while decoding: a progressive image holds every DCT coefficient
    /// (64 two-byte coefficients per 8x8 block per component) until its last scan; a sequential one only an MCU row.
    public var decoderWorkspaceBytes: Int {
        let maxH = components.map(\.horizontalSampling).max() ?? 1
        let maxV = components.map(\.verticalSampling).max() ?? 1
        let mcuColumns = (size.width + 8 * maxH - 1) / (8 * maxH)
        let mcuRows = (size.height + 8 * maxV - 1) / (8 * maxV)
        if process == .progressive {
            let blocks = components.reduce(0) {
                $0 + mcuColumns * $1.horizontalSampling * mcuRows * $1.verticalSampling
            }
            return blocks * 128
        }
        let blocksPerMCURow = components.reduce(0) { $0 + mcuColumns * $1.horizontalSampling * $1.verticalSampling }
        // The MCU row's coefficients, its sample rows and libjpeg's upsampling context (a few rows, generously).
        return blocksPerMCURow * 128 * 2 + size.width * 4 * 8 * maxV * 3 + 65536
    }

    /// Reads the header from the start of a file through `read(offset, count)`, which returns at most `count` bytes
    /// (fewer at the end of the file). Only marker segments are read, so a 20 MB photo costs a few kilobytes.
    public static func parse(file: String, read: (Int, Int) throws(ImageError) -> [UInt8]) throws(ImageError)
        -> JPEGHeader
    {
        func fail(_ reason: ImageError.Reason) -> ImageError { ImageError(file: file, reason: reason) }
        let start = try read(0, 16)
        if start.isEmpty { throw fail(.empty) }
        guard start.count >= 2, start[0] == 0xFF, start[1] == 0xD8 else {
            throw fail(.notJPEG(Self.describeNonJPEG(start)))
        }
        var position = 2
        var frame: (size: Size, process: Process, arithmetic: Bool, precision: Int, components: [Component])?
        var exif: ExifReader.Fields?
        var rating: Int?
        var adobeTransform: Int?
        var iccChunks: [(sequence: UInt8, range: Range<Int>)] = []
        // A real JPEG has a few dozen segments before its first scan; bound the walk against crafted files.
        for _ in 0..<4096 {
            var bytes = try read(position, 4)
            guard bytes.count >= 2 else { throw fail(.malformed("file ends before the first scan (truncated)")) }
            if bytes[0] != 0xFF {
                // libjpeg skips garbage between segments with a warning; find the next marker the same way.
                let window = try read(position, 65536)
                guard let next = window.firstIndex(of: 0xFF) else {
                    throw fail(.malformed("no marker where one was expected at byte \(position)"))
                }
                position += next
                continue
            }
            if bytes[1] == 0xFF {
                position += 1
                continue
            }
            let marker = bytes[1]
            switch marker {
            case 0x01, 0xD0...0xD7:
                position += 2
                continue
            case 0xD8:
                throw fail(.malformed("second start-of-image marker at byte \(position)"))
            case 0xD9:
                throw fail(.malformed("end of image before any picture data"))
            default:
                break
            }
            guard bytes.count >= 4 else { throw fail(.malformed("file ends inside a marker (truncated)")) }
            let length = Int(bytes[2]) << 8 | Int(bytes[3])
            guard length >= 2 else {
                throw fail(.malformed("segment 0xFF\(hex(marker)) at byte \(position) has length \(length)"))
            }
            let payloadStart = position + 4
            let payloadLength = length - 2
            switch marker {
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                bytes = try read(payloadStart, payloadLength)
                guard bytes.count == payloadLength else { throw fail(.malformed("frame header is truncated")) }
                frame = try parseFrame(marker: marker, payload: bytes, fail: fail)
            case 0xE1:
                let signature = XMPRating.jpegSignature
                bytes = try read(payloadStart, min(payloadLength, signature.count))
                if exif == nil, bytes.starts(with: [0x45, 0x78, 0x69, 0x66, 0, 0]) {
                    exif = ExifReader.read(try read(payloadStart, payloadLength)[...])
                } else if rating == nil, bytes.elementsEqual(signature) {
                    let packet = try read(payloadStart + signature.count, payloadLength - signature.count)
                    rating = XMPRating.rating(in: packet[...])
                }
            case 0xE2 where payloadLength > 14:
                bytes = try read(payloadStart, 14)
                if bytes.count == 14, bytes.starts(with: Array("ICC_PROFILE".utf8) + [0]) {
                    iccChunks.append((bytes[12], payloadStart + 14..<payloadStart + payloadLength))
                }
            case 0xEE:
                bytes = try read(payloadStart, min(payloadLength, 12))
                if bytes.count >= 12, bytes.starts(with: Array("Adobe".utf8)) { adobeTransform = Int(bytes[11]) }
            case 0xDA:
                guard let frame else { throw fail(.malformed("scan before frame header")) }
                return JPEGHeader(
                    size: frame.size, process: frame.process, arithmetic: frame.arithmetic,
                    precision: frame.precision, components: frame.components, adobeTransform: adobeTransform,
                    orientation: exif?.orientation ?? .up, dateTimeOriginal: exif?.dateTimeOriginal, rating: rating,
                    location: exif?.location, iccChunks: iccChunks.sorted { $0.sequence < $1.sequence }.map(\.range))
            default:
                break
            }
            position = payloadStart + payloadLength
        }
        throw fail(.malformed("too many segments before the first scan"))
    }

    private static func parseFrame(
        marker: UInt8, payload: [UInt8], fail: (ImageError.Reason) -> ImageError
    ) throws(ImageError) -> (Size, Process, Bool, Int, [Component]) {
        let process: Process
        switch marker & 0x07 {
        case 0: process = .baseline
        case 1: process = .extendedSequential
        case 2: process = .progressive
        case 3: process = .lossless
        default: process = .hierarchical
        }
        let arithmetic = marker >= 0xC9
        guard payload.count >= 6 else { throw fail(.malformed("frame header is too short")) }
        let precision = Int(payload[0])
        let height = Int(payload[1]) << 8 | Int(payload[2])
        let width = Int(payload[3]) << 8 | Int(payload[4])
        let count = Int(payload[5])
        guard payload.count >= 6 + 3 * count else { throw fail(.malformed("frame header is truncated")) }
        if process == .lossless { throw fail(.unsupported("lossless JPEG (SOF\(marker & 0x0F)) cannot be shown")) }
        if process == .hierarchical {
            throw fail(.unsupported("hierarchical JPEG (SOF\(marker & 0x0F)) cannot be shown"))
        }
        guard precision == 8 else {
            throw fail(.unsupported("\(precision)-bit samples (only 8-bit JPEG photos can be shown)"))
        }
        guard width > 0, height > 0 else {
            throw fail(.unsupported("image size \(width)x\(height) (a height defined later by a DNL marker)"))
        }
        guard [1, 3, 4].contains(count) else { throw fail(.unsupported("\(count) colour components")) }
        var components: [Component] = []
        for index in 0..<count {
            let sampling = payload[6 + 3 * index + 1]
            let horizontal = Int(sampling >> 4)
            let vertical = Int(sampling & 0x0F)
            guard (1...4).contains(horizontal), (1...4).contains(vertical) else {
                throw fail(.malformed("component \(index + 1) has sampling factors \(horizontal)x\(vertical)"))
            }
            components.append(Component(horizontalSampling: horizontal, verticalSampling: vertical))
        }
        return (Size(width: width, height: height), process, arithmetic, precision, components)
    }

    static func describeNonJPEG(_ start: [UInt8]) -> String {
        if start.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "PNG image data" }
        if start.starts(with: Array("GIF8".utf8)) { return "GIF image data" }
        if start.count >= 12, start.starts(with: Array("RIFF".utf8)), start[8..<12].elementsEqual("WEBP".utf8) {
            return "WebP image data"
        }
        if start.count >= 12, start[4..<8].elementsEqual("ftyp".utf8) { return "HEIF/AVIF or MP4 data" }
        if start.starts(with: [0x49, 0x49, 0x2A, 0]) || start.starts(with: [0x4D, 0x4D, 0, 0x2A]) {
            return "TIFF data"
        }
        let shown = start.prefix(2).map { "0x\(hex($0))" }.joined(separator: " ")
        return "starts with \(shown) instead of 0xFF 0xD8"
    }
}

func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
}
