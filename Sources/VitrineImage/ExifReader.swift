import VitrineCore

/// Reads the EXIF fields Vitrine uses from an APP1 `Exif` payload: orientation, capture date and GPS position.
///
/// Every offset in a TIFF structure comes from the file, so each is checked against the payload before use; a
/// malformed block yields what could be read (orientation defaults to upright), never a crash.
public enum ExifReader {
    public struct Fields: Equatable, Sendable {
        public var orientation: Orientation?
        /// `DateTimeOriginal` as written, `YYYY:MM:DD HH:MM:SS`.
        public var dateTimeOriginal: String?
        /// GPSLatitude and GPSLongitude signed by their refs; nil unless all four tags are there and make a point on
        /// the globe (a GPS IFD with only GPSVersionID, as some cameras write without a fix, is no location).
        public var location: GeoCoordinate?
    }

    /// Cameras write a few dozen entries per IFD; more than this is a corrupt or hostile count.
    static let maximumEntries = 1024

    /// `payload` is the APP1 segment body after the length field, starting with `Exif\0\0`.
    public static func read(_ payload: ArraySlice<UInt8>) -> Fields {
        guard payload.count >= 14, payload.prefix(6).elementsEqual(exifHeader) else { return Fields() }
        return read(tiff: payload.dropFirst(6))
    }

    static let exifHeader: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]

    /// An EXIF block as PNG (eXIf) and WebP (EXIF) store it: the TIFF structure itself, though some writers put
    /// JPEG's `Exif\0\0` in front; both are read.
    public static func read(block: ArraySlice<UInt8>) -> Fields {
        block.prefix(6).elementsEqual(exifHeader) ? read(tiff: block.dropFirst(6)) : read(tiff: block)
    }

    /// An EXIF block as libheif hands it from a HEIF file: a four-byte big-endian offset from the end of those four
    /// bytes to the TIFF header (usually past `Exif\0\0`), then the rest.
    public static func read(heifBlock block: [UInt8]) -> Fields? {
        guard block.count > 4 else { return nil }
        let offset = block[0..<4].reduce(0) { $0 << 8 | Int($1) }
        guard offset < block.count - 4 else { return nil }
        return read(tiff: block[(4 + offset)...])
    }

    /// The TIFF structure (byte order mark first).
    public static func read(tiff bytes: ArraySlice<UInt8>) -> Fields {
        var fields = Fields()
        guard bytes.count >= 8 else { return fields }
        let tiff = Array(bytes)
        let little: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return fields
        }
        func u16(_ offset: Int) -> Int? {
            guard offset >= 0, offset + 2 <= tiff.count else { return nil }
            let a = Int(tiff[offset])
            let b = Int(tiff[offset + 1])
            return little ? a | b << 8 : a << 8 | b
        }
        func u32(_ offset: Int) -> Int? {
            guard let first = u16(offset), let second = u16(offset + 2) else { return nil }
            return little ? first | second << 16 : first << 16 | second
        }
        guard u16(2) == 42, let ifd0 = u32(4) else { return fields }

        func entries(at offset: Int) -> [(tag: Int, type: Int, count: Int, valueOffset: Int)] {
            guard let count = u16(offset), count <= maximumEntries else { return [] }
            var result: [(Int, Int, Int, Int)] = []
            for index in 0..<count {
                let entry = offset + 2 + index * 12
                guard let tag = u16(entry), let type = u16(entry + 2), let count = u32(entry + 4) else { break }
                result.append((tag, type, count, entry + 8))
            }
            return result
        }

        var exifIFD: Int?
        var gpsIFD: Int?
        for entry in entries(at: ifd0) {
            switch entry.tag {
            case 0x0112 where entry.type == 3 && entry.count >= 1:
                fields.orientation = u16(entry.valueOffset).flatMap { Orientation(rawValue: $0) }
            case 0x8769 where entry.type == 4 || entry.type == 13:
                exifIFD = u32(entry.valueOffset)
            case 0x8825 where entry.type == 4 || entry.type == 13:
                gpsIFD = u32(entry.valueOffset)
            default:
                break
            }
        }
        if let exifIFD, exifIFD != ifd0 {
            for entry in entries(at: exifIFD) where entry.tag == 0x9003 && entry.type == 2 && entry.count >= 19 {
                guard let start = entry.count > 4 ? u32(entry.valueOffset) : entry.valueOffset,
                    start >= 0, start + 19 <= tiff.count
                else { continue }
                let text = String(decoding: tiff[start..<start + 19], as: UTF8.self)
                if text.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }), text != "0000:00:00 00:00:00" {
                    fields.dateTimeOriginal = text
                }
            }
        }
        if let gpsIFD {
            let byte = { (offset: Int) -> UInt8? in offset >= 0 && offset < tiff.count ? tiff[offset] : nil }
            fields.location = location(entries(at: gpsIFD), byte: byte, u32: u32)
        }
        return fields
    }

    /// The position in a GPS IFD: tags 1 and 3 (`N`/`S`, `E`/`W`) sign tags 2 and 4, each up to three RATIONALs
    /// (degrees, minutes, seconds; some cameras write decimal minutes and 0 seconds, which adds up the same).
    static func location(
        _ entries: [(tag: Int, type: Int, count: Int, valueOffset: Int)], byte: (Int) -> UInt8?,
        u32: (Int) -> Int?
    ) -> GeoCoordinate? {
        func reference(_ tag: Int) -> UInt8? {
            // An ASCII value of up to four bytes is stored in the entry itself.
            guard let entry = entries.first(where: { $0.tag == tag }), entry.type == 2, entry.count >= 1 else {
                return nil
            }
            return byte(entry.valueOffset)
        }
        func degrees(_ tag: Int) -> Double? {
            guard let entry = entries.first(where: { $0.tag == tag }), entry.type == 5, entry.count >= 1,
                let start = u32(entry.valueOffset)
            else { return nil }
            var total = 0.0
            for (index, unit) in [1.0, 60, 3600].prefix(entry.count).enumerated() {
                guard let numerator = u32(start + index * 8), let denominator = u32(start + index * 8 + 4),
                    denominator != 0
                else { return nil }
                total += Double(numerator) / Double(denominator) / unit
            }
            return total
        }
        guard let north = reference(1), let latitude = degrees(2), let east = reference(3),
            let longitude = degrees(4)
        else { return nil }
        let latitudeSign: Double
        switch north {
        case UInt8(ascii: "N"), UInt8(ascii: "n"): latitudeSign = 1
        case UInt8(ascii: "S"), UInt8(ascii: "s"): latitudeSign = -1
        default: return nil
        }
        let longitudeSign: Double
        switch east {
        case UInt8(ascii: "E"), UInt8(ascii: "e"): longitudeSign = 1
        case UInt8(ascii: "W"), UInt8(ascii: "w"): longitudeSign = -1
        default: return nil
        }
        return GeoCoordinate(latitude: latitude * latitudeSign, longitude: longitude * longitudeSign)
    }
}
