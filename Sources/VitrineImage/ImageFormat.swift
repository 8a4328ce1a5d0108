/// The image formats Vitrine decodes, told apart by the file's first bytes, never its name: a phone or a web
/// download that saved a PNG as `.jpg` is still shown.
public enum ImageFormat: String, Sendable, Equatable, CaseIterable {
    case jpeg = "JPEG"
    case png = "PNG"
    case webp = "WebP"

    /// How many leading bytes `detect` looks at.
    public static let signatureLength = 16

    /// The format the first bytes of a file announce, or nil with nothing Vitrine reads.
    public static func detect(_ start: [UInt8]) -> ImageFormat? {
        if start.count >= 2, start[0] == 0xFF, start[1] == 0xD8 { return .jpeg }
        if start.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if start.count >= 12, start.starts(with: Array("RIFF".utf8)), start[8..<12].elementsEqual("WEBP".utf8) {
            return .webp
        }
        return nil
    }

    /// What a file that is none of the formats looks like, for the refusal.
    public static func describeUnknown(_ start: [UInt8]) -> String {
        if start.starts(with: Array("GIF8".utf8)) { return "GIF image data" }
        if start.count >= 12, start[4..<8].elementsEqual("ftyp".utf8) { return "HEIF/AVIF or MP4 data" }
        if start.starts(with: [0x49, 0x49, 0x2A, 0]) || start.starts(with: [0x4D, 0x4D, 0, 0x2A]) {
            return "TIFF data"
        }
        if start.starts(with: Array("BM".utf8)) { return "BMP image data" }
        let shown = start.prefix(4).map { "0x\(hex($0))" }.joined(separator: " ")
        return "starts with \(shown)"
    }

    /// The formats, as a refusal lists them.
    public static var shownList: String {
        let names = allCases.map(\.rawValue)
        return names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
    }
}
