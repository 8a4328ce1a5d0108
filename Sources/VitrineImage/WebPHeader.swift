import VitrineCore

/// What Vitrine needs to know about a WebP before decoding it, from its RIFF chunks: the size (the VP8X canvas, or
/// the VP8/VP8L bitstream's own), lossy or lossless, alpha, animation, a colour profile and EXIF.
public struct WebPHeader: Equatable, Sendable {
    public var size: Size
    public var lossless: Bool
    public var hasAlpha: Bool
    /// An animation: its first frame is shown.
    public var animated: Bool
    public var hasICCProfile: Bool
    /// Where the ICCP chunk's profile is in the file.
    public var iccRange: Range<Int>?
    public var exif: ExifReader.Fields?
    public var fileBytes: Int
    /// Where a still lossless image's VP8L bitstream is in the file.
    public var losslessData: Range<Int>?

    /// A still lossless image, decoded row by row by Vitrine rather than whole by libwebp.
    public var decodesRowByRow: Bool { lossless && !animated && losslessData != nil }

    /// A WebP holds a dozen chunks at most; bound the walk against crafted files.
    static let maximumChunks = 1024
    static let largestReadChunk = 1 << 20

    /// Bytes the decode keeps, besides the output. A still lossless image is decoded by Vitrine's own VP8L decoder
    /// (`VP8LDecoder`): a ring of at most 2^20 pixels, a few rows, and its prefix codes (bounded). Anything else
    /// by libwebp: the file, which it decodes from memory; for a lossless image its whole ARGB picture; for a
    /// lossy one a few macroblock rows of YUV and the alpha plane; for an animation the canvas it composes the
    /// first frame on and the one it keeps of the frame before.
    public var decoderWorkspaceBytes: Int {
        let pixels = size.pixelCount
        if decodesRowByRow {
            return Int.saturatingSum(
                VP8LDecoder.workspaceBytes(width: size.width, pixels: pixels), VP8LDecoder.mostCodeEntries * 4,
                256 << 10)
        }
        var bytes = fileBytes.saturatingPlus(256 << 10)
        if lossless {
            bytes = Int.saturatingSum(bytes, pixels.saturatingTimes(4), size.width.saturatingTimes(4 * 16))
        } else {
            bytes = Int.saturatingSum(bytes, size.width.saturatingTimes(16 * 12), hasAlpha ? pixels : 0)
        }
        if animated { bytes = bytes.saturatingPlus(pixels.saturatingTimes(8)) }
        return bytes
    }

    public static func parse(
        file: String, fileBytes: Int, read: (Int, Int) throws(ImageError) -> [UInt8]
    ) throws(ImageError) -> WebPHeader {
        func fail(_ what: String) -> ImageError { ImageError(file: file, reason: .damaged(.webp, what)) }
        let start = try read(0, 12)
        if start.isEmpty { throw ImageError(file: file, reason: .empty) }
        guard start.count == 12, start.starts(with: Array("RIFF".utf8)), start[8..<12].elementsEqual("WEBP".utf8)
        else { throw fail("no RIFF WEBP header") }
        let riffEnd = 8 + littleEndian(start, 4, count: 4)
        var header = WebPHeader(
            size: Size(width: 0, height: 0), lossless: false, hasAlpha: false, animated: false,
            hasICCProfile: false, iccRange: nil, exif: nil, fileBytes: fileBytes, losslessData: nil)
        var canvas: Size?
        var bitstream: Size?
        var position = 12
        for _ in 0..<maximumChunks {
            let chunk = try read(position, 8)
            if chunk.count < 8 { break }
            let type = String(decoding: chunk[0..<4], as: UTF8.self)
            let length = littleEndian(chunk, 4, count: 4)
            let payload = position + 8
            switch type {
            case "VP8X":
                let bytes = try read(payload, 10)
                guard bytes.count == 10 else { throw fail("VP8X chunk is truncated") }
                header.hasICCProfile = bytes[0] & 0x20 != 0
                header.hasAlpha = bytes[0] & 0x10 != 0
                header.animated = bytes[0] & 0x02 != 0
                canvas = Size(
                    width: littleEndian(bytes, 4, count: 3) + 1, height: littleEndian(bytes, 7, count: 3) + 1)
            case "VP8 " where bitstream == nil:
                let bytes = try read(payload, 10)
                guard bytes.count == 10 else { throw fail("VP8 chunk is truncated") }
                guard bytes[3] == 0x9D, bytes[4] == 0x01, bytes[5] == 0x2A else {
                    throw fail("VP8 bitstream without a key frame start code")
                }
                bitstream = Size(
                    width: littleEndian(bytes, 6, count: 2) & 0x3FFF, height: littleEndian(bytes, 8, count: 2) & 0x3FFF)
            case "VP8L" where bitstream == nil:
                let bytes = try read(payload, 5)
                guard bytes.count == 5 else { throw fail("VP8L chunk is truncated") }
                guard bytes[0] == 0x2F else { throw fail("VP8L bitstream without its signature") }
                let bits = littleEndian(bytes, 1, count: 4)
                bitstream = Size(width: bits & 0x3FFF + 1, height: (bits >> 14) & 0x3FFF + 1)
                header.lossless = true
                header.losslessData = payload..<payload + length
                if bits >> 28 & 1 != 0 { header.hasAlpha = true }
            case "ANMF" where bitstream == nil:
                // The first frame's bitstream tells lossy or lossless; its size is the canvas's business.
                let bytes = try read(payload + 16, 8)
                if bytes.count == 8 { header.lossless = bytes[0..<4].elementsEqual("VP8L".utf8) }
                bitstream = canvas
            case "ICCP" where header.iccRange == nil:
                header.iccRange = payload..<payload + length
            case "EXIF" where length <= largestReadChunk && header.exif == nil:
                header.exif = ExifReader.read(block: try read(payload, length)[...])
            default: break
            }
            position = payload + length + (length & 1)
            if position >= riffEnd { break }
        }
        guard let size = canvas ?? bitstream else { throw fail("no image data (no VP8, VP8L or VP8X chunk)") }
        guard size.width > 0, size.height > 0 else { throw fail("image size \(size)") }
        header.size = size
        return header
    }

    static func littleEndian(_ bytes: [UInt8], _ offset: Int, count: Int) -> Int {
        bytes[offset..<offset + count].reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}
