import CLCMS
import CSPNG
import CWebP
import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// PNG and WebP fixtures made in the test with libspng's and libwebp's encoders, so tests need no photo files.
public enum ImageFixture {
    public struct EncodeError: Error, CustomStringConvertible {
        public var description: String
    }

    /// PNG colour types, with the channels a pixel has in the bytes `png` takes.
    public enum PNGColor: Sendable {
        case gray, rgb, grayAlpha, rgba

        var type: UInt8 {
            switch self {
            case .gray: return 0
            case .rgb: return 2
            case .grayAlpha: return 4
            case .rgba: return 6
            }
        }

        public var channels: Int {
            switch self {
            case .gray: return 1
            case .rgb: return 3
            case .grayAlpha: return 2
            case .rgba: return 4
            }
        }
    }

    /// Encodes samples (row-major; 16-bit ones in host byte order, as libspng takes them) as a PNG, Adam7-interlaced on request,
    /// with an eXIf chunk holding `exif` (a TIFF structure) when given.
    public static func png(
        samples: [UInt8], size: Size, color: PNGColor, bitDepth: UInt8 = 8, interlaced: Bool = false,
        exif: [UInt8]? = nil, icc: [UInt8]? = nil
    ) throws -> [UInt8] {
        guard let context = spng_ctx_new(Int32(SPNG_CTX_ENCODER.rawValue)) else {
            throw EncodeError(description: "spng_ctx_new failed")
        }
        defer { spng_ctx_free(context) }
        spng_set_option(context, SPNG_ENCODE_TO_BUFFER, 1)
        var header = spng_ihdr(
            width: UInt32(size.width), height: UInt32(size.height), bit_depth: bitDepth, color_type: color.type,
            compression_method: 0, filter_method: 0, interlace_method: interlaced ? 1 : 0)
        var status = spng_set_ihdr(context, &header)
        var exifBytes = (exif ?? []).map { CChar(bitPattern: $0) }
        if status == 0, exif != nil {
            status = exifBytes.withUnsafeMutableBufferPointer { buffer in
                var chunk = spng_exif(length: buffer.count, data: buffer.baseAddress)
                return spng_set_exif(context, &chunk)
            }
        }
        var iccBytes = (icc ?? []).map { CChar(bitPattern: $0) }
        if status == 0, icc != nil {
            status = iccBytes.withUnsafeMutableBufferPointer { buffer in
                var chunk = spng_iccp()
                withUnsafeMutableBytes(of: &chunk.profile_name) { name in
                    for (index, byte) in "Display P3".utf8.enumerated() { name[index] = byte }
                }
                chunk.profile_len = buffer.count
                chunk.profile = buffer.baseAddress
                return spng_set_iccp(context, &chunk)
            }
        }
        if status == 0 {
            status = samples.withUnsafeBytes { raw in
                spng_encode_image(
                    context, raw.baseAddress, raw.count, Int32(SPNG_FMT_PNG.rawValue),
                    Int32(SPNG_ENCODE_FINALIZE.rawValue))
            }
        }
        guard status == 0 else {
            throw EncodeError(description: "libspng: " + String(cString: spng_strerror(status)))
        }
        var length = 0
        var error: Int32 = 0
        guard let buffer = spng_get_png_buffer(context, &length, &error) else {
            throw EncodeError(description: "libspng: no PNG buffer (error \(error))")
        }
        defer { free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }

    /// Encodes RGBA pixels (4 bytes each) as a WebP: lossless, or lossy at `quality`.
    public static func webp(rgba: [UInt8], size: Size, lossless: Bool, quality: Float = 90) throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let length = rgba.withUnsafeBufferPointer { buffer in
            lossless
                ? WebPEncodeLosslessRGBA(
                    buffer.baseAddress, Int32(size.width), Int32(size.height), Int32(size.width * 4), &output)
                : WebPEncodeRGBA(
                    buffer.baseAddress, Int32(size.width), Int32(size.height), Int32(size.width * 4), quality, &output)
        }
        guard length > 0, let output else { throw EncodeError(description: "libwebp could not encode") }
        defer { WebPFree(output) }
        return Array(UnsafeBufferPointer(start: output, count: length))
    }

    /// Encodes RGBA pixels as a lossless WebP with libwebp's advanced settings: effort `method` (0 to 6), `quality`
    /// (effort against size), `exact` (keep the colour under transparent pixels).
    public static func losslessWebP(rgba: [UInt8], size: Size, method: Int, quality: Float, exact: Bool = false)
        throws -> [UInt8]
    {
        var output: UnsafeMutablePointer<UInt8>?
        let length = rgba.withUnsafeBufferPointer { buffer in
            vitrine_webp_encode_lossless(
                buffer.baseAddress, Int32(size.width), Int32(size.height), Int32(method), quality, exact ? 1 : 0,
                &output)
        }
        guard length > 0, let output else { throw EncodeError(description: "libwebp could not encode") }
        defer { WebPFree(output) }
        return Array(UnsafeBufferPointer(start: output, count: length))
    }

    /// libwebp's own decode of a WebP, as RGBA: the reference a decoder of Vitrine's is checked against.
    public static func decodeWebP(_ bytes: [UInt8]) throws -> (rgba: [UInt8], size: Size) {
        var width: Int32 = 0
        var height: Int32 = 0
        guard let pixels = bytes.withUnsafeBufferPointer({ WebPDecodeRGBA($0.baseAddress, $0.count, &width, &height) })
        else { throw EncodeError(description: "libwebp could not decode") }
        defer { WebPFree(pixels) }
        let size = Size(width: Int(width), height: Int(height))
        return (Array(UnsafeBufferPointer(start: pixels, count: size.pixelCount * 4)), size)
    }

    /// A simple WebP (one VP8 or VP8L chunk) rewrapped as an extended one: a VP8X header with the alpha and EXIF
    /// flags as asked, the bitstream, then an EXIF chunk holding `exif` (a TIFF structure), as phones write them.
    public static func extendedWebP(_ simple: [UInt8], size: Size, alpha: Bool, exif: [UInt8]?) -> [UInt8] {
        let bitstream = Array(simple[12...])
        var flags: UInt8 = alpha ? 0x10 : 0
        if exif != nil { flags |= 0x08 }
        var body = Array("WEBP".utf8)
        body += chunk("VP8X", [flags, 0, 0, 0] + le24(size.width - 1) + le24(size.height - 1))
        body += bitstream
        if let exif { body += chunk("EXIF", exif) }
        return Array("RIFF".utf8) + le32(body.count) + body
    }

    static func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        Array(type.utf8) + le32(payload.count) + payload + (payload.count % 2 == 1 ? [0] : [])
    }

    static func le24(_ value: Int) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF)]
    }
    static func le32(_ value: Int) -> [UInt8] { le24(value) + [UInt8(value >> 24 & 0xFF)] }

    /// A minimal big-endian TIFF structure with one Orientation entry, as eXIf and EXIF chunks hold it.
    public static func tiffOrientation(_ value: UInt16) -> [UInt8] {
        [
            0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, UInt8(value >> 8), UInt8(value & 0xFF),
            0, 0,
        ]
            + [0, 0, 0, 0]
    }

    /// RGBA quadrants red, green, blue, yellow (TL, TR, BL, BR) at `alpha`: `JPEGFixture.quadrants` with alpha.
    public static func quadrantsRGBA(size: Size, alpha: UInt8 = 255) -> [UInt8] {
        let rgb = JPEGFixture.quadrants(size: size)
        var pixels: [UInt8] = []
        pixels.reserveCapacity(size.pixelCount * 4)
        for index in stride(from: 0, to: rgb.count, by: 3) { pixels += rgb[index..<index + 3] + [alpha] }
        return pixels
    }

    /// Drops the alpha of RGBA pixels.
    public static func rgb(fromRGBA rgba: [UInt8]) -> [UInt8] {
        var rgb: [UInt8] = []
        rgb.reserveCapacity(rgba.count / 4 * 3)
        for index in stride(from: 0, to: rgba.count, by: 4) { rgb += rgba[index..<index + 3] }
        return rgb
    }

    /// A Display P3 ICC profile (P3 primaries, D65 white, the sRGB curve), as recent iPhones tag their photos,
    /// made by LittleCMS.
    public static func displayP3Profile() throws -> [UInt8] {
        try rgbProfile(red: (0.680, 0.320), green: (0.265, 0.690), blue: (0.150, 0.060))
    }

    /// An ICC profile of sRGB itself, as phones and cameras embed it: D65, the BT.709 primaries, the sRGB curve.
    public static func sRGBProfile() throws -> [UInt8] {
        try rgbProfile(red: (0.640, 0.330), green: (0.300, 0.600), blue: (0.150, 0.060))
    }

    /// An RGB ICC profile with these primaries (CIE xy), the D65 white point and the sRGB tone curve.
    static func rgbProfile(red: (Double, Double), green: (Double, Double), blue: (Double, Double)) throws -> [UInt8] {
        var white = cmsCIExyY(x: 0.3127, y: 0.3290, Y: 1)
        var primaries = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: red.0, y: red.1, Y: 1), Green: cmsCIExyY(x: green.0, y: green.1, Y: 1),
            Blue: cmsCIExyY(x: blue.0, y: blue.1, Y: 1))
        var parameters: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
        guard let curve = cmsBuildParametricToneCurve(nil, 4, &parameters) else {
            throw EncodeError(description: "LittleCMS could not build the sRGB curve")
        }
        defer { cmsFreeToneCurve(curve) }
        var curves: [OpaquePointer?] = [curve, curve, curve]
        guard let profile = cmsCreateRGBProfile(&white, &primaries, &curves) else {
            throw EncodeError(description: "LittleCMS could not make the profile")
        }
        defer { cmsCloseProfile(profile) }
        var length: UInt32 = 0
        guard cmsSaveProfileToMem(profile, nil, &length) != 0, length > 0 else {
            throw EncodeError(description: "LittleCMS could not size the profile")
        }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        guard cmsSaveProfileToMem(profile, &bytes, &length) != 0 else {
            throw EncodeError(description: "LittleCMS could not write the profile")
        }
        return bytes
    }

    /// JPEG APP2 segments carrying `profile` (`ICC_PROFILE`, numbered pieces of at most 65,519 bytes).
    public static func iccSegments(_ profile: [UInt8]) -> [UInt8] {
        let pieceSize = 65_519
        let pieces = stride(from: 0, to: profile.count, by: pieceSize).map {
            Array(profile[$0..<min(profile.count, $0 + pieceSize)])
        }
        var segments: [UInt8] = []
        for (index, piece) in pieces.enumerated() {
            let length = 2 + 14 + piece.count
            segments += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + Array("ICC_PROFILE".utf8) + [0]
            segments += [UInt8(index + 1), UInt8(pieces.count)] + piece
        }
        return segments
    }
}
