import CTurboJPEG
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// JPEG fixtures made in the test with libjpeg-turbo's encoder, so tests need no photo files.
public enum JPEGFixture {
    public enum Subsampling: CaseIterable, Sendable {
        case s444, s422, s420, gray

        var turbo: Int32 {
            switch self {
            case .s444: return Int32(TJSAMP_444.rawValue)
            case .s422: return Int32(TJSAMP_422.rawValue)
            case .s420: return Int32(TJSAMP_420.rawValue)
            case .gray: return Int32(TJSAMP_GRAY.rawValue)
            }
        }
    }

    public struct EncodeError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Encodes RGB pixels (row-major, 3 bytes each) as a baseline JPEG.
    public static func encode(
        rgb: [UInt8], size: Size, subsampling: Subsampling = .s444, quality: Int32 = 95, progressive: Bool = false
    ) throws -> [UInt8] {
        try encode(
            pixels: rgb, size: size, format: Int32(TJPF_RGB.rawValue), subsampling: subsampling,
            quality: quality, progressive: progressive)
    }

    /// Encodes CMYK pixels (4 bytes each, not inverted) as a YCCK JPEG, the way TurboJPEG writes four-channel
    /// files (with an Adobe marker, channels stored inverted as Adobe applications do).
    public static func encode(cmyk: [UInt8], size: Size) throws -> [UInt8] {
        try encode(
            pixels: cmyk, size: size, format: Int32(TJPF_CMYK.rawValue), subsampling: .s444, quality: 95,
            progressive: false)
    }

    static func encode(
        pixels: [UInt8], size: Size, format: Int32, subsampling: Subsampling, quality: Int32, progressive: Bool
    ) throws -> [UInt8] {
        guard let handle = tjInitCompress() else { throw EncodeError(description: "tjInitCompress failed") }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        let flags: Int32 = progressive ? 16384 : 0
        let channels = format == Int32(TJPF_CMYK.rawValue) ? 4 : 3
        let status = pixels.withUnsafeBufferPointer { buffer in
            tjCompress2(
                handle, buffer.baseAddress, Int32(size.width), Int32(size.width * channels), Int32(size.height),
                format, &output, &length, subsampling.turbo, quality, flags)
        }
        defer { tjFree(output) }
        guard status == 0, let output else {
            throw EncodeError(description: String(cString: tjGetErrorStr2(handle)))
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// An image of one colour.
    public static func solid(_ color: RGBColor, size: Size) -> [UInt8] {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(size.pixelCount * 3)
        for _ in 0..<size.pixelCount { pixels += [color.red, color.green, color.blue] }
        return pixels
    }

    public static let red = RGBColor(red: 230, green: 20, blue: 20)
    public static let green = RGBColor(red: 20, green: 200, blue: 40)
    public static let blue = RGBColor(red: 20, green: 40, blue: 220)
    public static let yellow = RGBColor(red: 240, green: 220, blue: 20)

    /// Four quadrants: red top-left, green top-right, blue bottom-left, yellow bottom-right (as stored).
    public static func quadrants(size: Size) -> [UInt8] {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(size.pixelCount * 3)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let color: RGBColor
                switch (x < size.width / 2, y < size.height / 2) {
                case (true, true): color = red
                case (false, true): color = green
                case (true, false): color = blue
                case (false, false): color = yellow
                }
                pixels += [color.red, color.green, color.blue]
            }
        }
        return pixels
    }

    /// An APP1 EXIF segment (marker included) holding IFD0 with the orientation tag, in either byte order,
    /// optionally with an Exif sub-IFD carrying DateTimeOriginal.
    public static func exifSegment(orientation: Int, bigEndian: Bool = false, dateTimeOriginal: String? = nil)
        -> [UInt8]
    {
        func u16(_ value: Int) -> [UInt8] {
            bigEndian
                ? [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] : [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)]
        }
        func u32(_ value: Int) -> [UInt8] {
            bigEndian ? u16(value >> 16) + u16(value & 0xFFFF) : u16(value & 0xFFFF) + u16(value >> 16)
        }
        var tiff: [UInt8] = bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        tiff += u16(42) + u32(8)
        let entryCount = dateTimeOriginal == nil ? 1 : 2
        tiff += u16(entryCount)
        tiff += u16(0x0112) + u16(3) + u32(1) + u16(orientation) + u16(0)
        if let dateTimeOriginal {
            let subIFD = 8 + 2 + entryCount * 12 + 4
            tiff += u16(0x8769) + u16(4) + u32(1) + u32(subIFD)
            tiff += u32(0)
            let textOffset = subIFD + 2 + 12 + 4
            tiff += u16(1) + u16(0x9003) + u16(2) + u32(20) + u32(textOffset) + u32(0)
            tiff += Array(dateTimeOriginal.utf8.prefix(19)) + [0]
        } else {
            tiff += u32(0)
        }
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// Inserts a segment right after SOI.
    /// An APP1 XMP segment whose packet rates the photo (`xmp:Rating`), as Lightroom writes it.
    public static func xmpSegment(rating: Int) -> [UInt8] {
        let packet =
            "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?><x:xmpmeta xmlns:x=\"adobe:ns:meta/\">"
            + "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description rdf:about=\"\" "
            + "xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\" xmp:Rating=\"\(rating)\"/></rdf:RDF></x:xmpmeta>"
            + "<?xpacket end=\"w\"?>"
        let payload = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0] + Array(packet.utf8)
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    public static func inserting(_ segment: [UInt8], into jpeg: [UInt8]) -> [UInt8] {
        Array(jpeg.prefix(2)) + segment + Array(jpeg.dropFirst(2))
    }

    /// The offset of the first marker `marker` (the 0xFF byte), scanning segments from SOI.
    public static func offset(ofMarker marker: UInt8, in jpeg: [UInt8]) -> Int? {
        var position = 2
        while position + 4 <= jpeg.count, jpeg[position] == 0xFF {
            if jpeg[position + 1] == marker { return position }
            let length = Int(jpeg[position + 2]) << 8 | Int(jpeg[position + 3])
            position += 2 + length
        }
        return nil
    }
}

/// A temporary folder removed when the test is done with it.
public final class TemporaryFolder {
    public let path: String

    public init() throws {
        var template = Array("/tmp/vitrine-test-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let base = buffer.baseAddress, mkdtemp(base) != nil else { return nil }
            return String(cString: base)
        }
        guard let created else {
            throw FileError(path: "/tmp", operation: "create a temporary folder", errno: errno)
        }
        path = created
    }

    deinit { remove(path) }

    private func remove(_ folder: String) {
        if let directory = opendir(folder) {
            while let entry = readdir(directory) {
                let (name, type) = FileBytes.entry(entry)
                if name == "." || name == ".." { continue }
                let child = "\(folder)/\(name)"
                if type == UInt8(DT_DIR) { remove(child) } else { unlink(child) }
            }
            closedir(directory)
        }
        rmdir(folder)
    }

    /// Writes a file (creating its folders) and returns its path.
    @discardableResult
    public func write(_ relativePath: String, _ bytes: [UInt8]) throws -> String {
        let full = "\(path)/\(relativePath)"
        var folder = path
        for part in relativePath.split(separator: "/").dropLast() {
            folder += "/\(part)"
            mkdir(folder, 0o755)
        }
        try FileBytes.writeAtomically(bytes, to: full)
        return full
    }

    @discardableResult
    public func write(_ relativePath: String, text: String) throws -> String {
        try write(relativePath, Array(text.utf8))
    }
}

/// The repository's root, found from this file's location.
public let repositoryRoot: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/")
}()

/// The `vitrine` executable the end-to-end tests run: `$VITRINE_TEST_BINARY` (the sanitizer runs point it at their
/// own build), else the debug build `swift build` makes.
public let vitrineBinary: String = {
    if let path = getenv("VITRINE_TEST_BINARY"), path.pointee != 0 { return String(cString: path) }
    return "\(repositoryRoot)/.build/debug/vitrine"
}()

/// Whether the end-to-end tests can run: the executable is built (`swift build` builds it; `swift test` alone may
/// not). Under CI=true they always run, so a missing executable fails them instead of skipping them.
public let vitrineBinaryRuns: Bool = {
    runningUnderCI || access(vitrineBinary, X_OK) == 0
}()
