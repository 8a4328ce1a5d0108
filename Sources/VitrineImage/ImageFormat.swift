/// The image formats Vitrine decodes, told apart by the file's first bytes, never its name: a phone or a web
/// download that saved a PNG as `.jpg` is still shown.
public enum ImageFormat: String, Sendable, Equatable, CaseIterable {
    case jpeg = "JPEG"
    case png = "PNG"
    case webp = "WebP"
    case heif = "HEIF"
    case avif = "AVIF"
    /// A video clip: MP4 and QuickTime (ISO media that is not an image), Matroska and WebM. libavformat reads it.
    case clip = "clip"

    /// How many leading bytes `detect` looks at: enough for an ISO media `ftyp` box's first compatible brands.
    public static let signatureLength = 32

    static let heifBrands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs"]
    static let avifBrands: Set<String> = ["avif", "avis"]
    /// The generic image brands, which HEIF and AVIF files both carry; the compatible brands tell which.
    static let imageBrands: Set<String> = ["mif1", "msf1"]

    /// The format the first bytes of a file announce, or nil with nothing Vitrine reads.
    public static func detect(_ start: [UInt8]) -> ImageFormat? {
        if start.count >= 2, start[0] == 0xFF, start[1] == 0xD8 { return .jpeg }
        if start.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if start.count >= 12, start.starts(with: Array("RIFF".utf8)), start[8..<12].elementsEqual("WEBP".utf8) {
            return .webp
        }
        if start.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return .clip }
        return isoMediaFormat(start)
    }

    /// HEIF or AVIF from an ISO media file's `ftyp` box: its major brand, or for the generic image brands the
    /// compatible brands that follow (an AVIF says `avif` there).
    static func isoMediaFormat(_ start: [UInt8]) -> ImageFormat? {
        guard start.count >= 12 else { return nil }
        // Old QuickTime files start with their movie, data or padding box, with no `ftyp`.
        if quickTimeBoxes.contains(where: { start[4..<8].elementsEqual($0.utf8) }) { return .clip }
        guard start[4..<8].elementsEqual("ftyp".utf8) else { return nil }
        let boxSize = start[0..<4].reduce(0) { $0 << 8 | Int($1) }
        func brand(at offset: Int) -> String { String(decoding: start[offset..<offset + 4], as: UTF8.self) }
        let major = brand(at: 8)
        var compatible: [String] = []
        var offset = 16
        while offset + 4 <= min(start.count, boxSize) {
            compatible.append(brand(at: offset))
            offset += 4
        }
        if avifBrands.contains(major) { return .avif }
        if heifBrands.contains(major) { return .heif }
        guard imageBrands.contains(major) || compatible.contains(where: imageBrands.contains) else { return .clip }
        if compatible.contains(where: avifBrands.contains) { return .avif }
        if compatible.contains(where: heifBrands.contains) || imageBrands.contains(major) { return .heif }
        return .clip
    }

    static let quickTimeBoxes = ["moov", "mdat", "wide", "free", "skip"]

    /// Whether the format is a clip (played) rather than a photo (shown).
    public var isClip: Bool { self == .clip }

    /// What a file that is none of the formats looks like, for the refusal.
    public static func describeUnknown(_ start: [UInt8]) -> String {
        if start.starts(with: Array("GIF8".utf8)) { return "GIF image data" }
        if start.starts(with: [0x49, 0x49, 0x2A, 0]) || start.starts(with: [0x4D, 0x4D, 0, 0x2A]) {
            return "TIFF data"
        }
        if start.starts(with: Array("BM".utf8)) { return "BMP image data" }
        let shown = start.prefix(4).map { "0x\(hex($0))" }.joined(separator: " ")
        return "starts with \(shown)"
    }

    /// The formats, as a refusal lists them.
    public static var shownList: String {
        let names = allCases.filter { !$0.isClip }.map(\.rawValue)
        return names.joined(separator: ", ") + " and clips (MP4, MOV, MKV, WebM)"
    }
}
