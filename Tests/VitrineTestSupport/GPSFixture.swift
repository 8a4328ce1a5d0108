/// EXIF blocks with a GPS IFD, written byte by byte in either byte order, as cameras and phones write them.
public enum GPSFixture {
    /// A value of a GPS tag: an ASCII ref, RATIONALs (numerator, denominator), or any other type with raw bytes.
    public enum Value: Sendable {
        case ascii(String)
        case rationals([(UInt32, UInt32)])
        case raw(type: Int, count: Int, bytes: [UInt8])
    }

    /// Tags 1 to 4 for a position given as degrees, minutes and seconds rationals.
    public static func position(
        latitude: [(UInt32, UInt32)], north: String, longitude: [(UInt32, UInt32)], east: String
    ) -> [(Int, Value)] {
        [(1, .ascii(north)), (2, .rationals(latitude)), (3, .ascii(east)), (4, .rationals(longitude))]
    }

    /// The TIFF structure: IFD0 with an orientation, the GPSInfo pointer and (with a date) the Exif IFD pointer, then
    /// the GPS IFD with GPSVersionID and `entries`, the values that do not fit in an entry, and the Exif IFD with
    /// DateTimeOriginal.
    public static func tiff(_ entries: [(Int, Value)], bigEndian: Bool = false, dateTimeOriginal: String? = nil)
        -> [UInt8]
    {
        func u16(_ value: Int) -> [UInt8] {
            bigEndian
                ? [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] : [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)]
        }
        func u32(_ value: Int) -> [UInt8] {
            bigEndian ? u16(value >> 16) + u16(value & 0xFFFF) : u16(value & 0xFFFF) + u16(value >> 16)
        }
        let all: [(Int, Value)] = [(0, .raw(type: 1, count: 4, bytes: [2, 3, 0, 0]))] + entries
        var values: [UInt8] = []
        var gpsEntries: [UInt8] = []
        let zerothCount = dateTimeOriginal == nil ? 2 : 3
        let gps = 8 + 2 + zerothCount * 12 + 4
        let valuesStart = gps + 2 + all.count * 12 + 4
        for (tag, value) in all {
            let (type, count, bytes): (Int, Int, [UInt8])
            switch value {
            case .ascii(let text): (type, count, bytes) = (2, text.utf8.count + 1, Array(text.utf8) + [0])
            case .rationals(let rationals):
                (type, count, bytes) = (5, rationals.count, rationals.flatMap { u32(Int($0.0)) + u32(Int($0.1)) })
            case .raw(let rawType, let rawCount, let rawBytes): (type, count, bytes) = (rawType, rawCount, rawBytes)
            }
            gpsEntries += u16(tag) + u16(type) + u32(count)
            if bytes.count <= 4 {
                gpsEntries += bytes + [UInt8](repeating: 0, count: 4 - bytes.count)
            } else {
                gpsEntries += u32(valuesStart + values.count)
                values += bytes
            }
        }
        let exif = valuesStart + values.count
        var tiff: [UInt8] = (bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + u16(42) + u32(8)
        tiff += u16(zerothCount) + u16(0x0112) + u16(3) + u32(1) + u16(1) + u16(0)
        if dateTimeOriginal != nil { tiff += u16(0x8769) + u16(4) + u32(1) + u32(exif) }
        tiff += u16(0x8825) + u16(4) + u32(1) + u32(gps) + u32(0)
        tiff += u16(all.count) + gpsEntries + u32(0) + values
        if let dateTimeOriginal {
            tiff += u16(1) + u16(0x9003) + u16(2) + u32(20) + u32(exif + 2 + 12 + 4) + u32(0)
            tiff += Array(dateTimeOriginal.utf8.prefix(19)) + [0]
        }
        return tiff
    }

    /// The block as a JPEG APP1 segment, marker included.
    public static func segment(_ tiff: [UInt8]) -> [UInt8] {
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// Århus as the Sony NEX-3N of the shared test set writes it: decimal minutes, 0 seconds.
    public static let aarhus = position(
        latitude: [(56, 1), (9_359_705, 1_000_000), (0, 1)], north: "N",
        longitude: [(10, 1), (12_492_287, 1_000_000), (0, 1)], east: "E")
    public static let aarhusLatitude = 56.0 + 9.359705 / 60
    public static let aarhusLongitude = 10.0 + 12.492287 / 60
}
