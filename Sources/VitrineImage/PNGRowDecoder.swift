import CSPNG
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One libspng decode, row by row: a non-interlaced PNG of any size passes through in a few rows of memory, as a
/// JPEG does. Palette, grey, 16-bit and tRNS transparency are expanded by libspng to 8-bit RGBA, handed out as
/// straight BGRA. 8-bit RGB and RGBA (photos, screenshots) come as stored: libspng's expansion to RGBA is a
/// per-pixel loop that costs more than the conversion to BGRX done here. An Adam7-interlaced PNG delivers its
/// rows in seven passes, so it is decoded whole first (its header charges the budget for that).
final class PNGRowDecoder: RowDecoder {
    static let largestChunk = 2 << 20

    let outputSize: Size
    var rowBatch: Int { 8 }
    var warning: String? { nil }
    /// The iCCP chunk's profile, which libspng inflates while reading the chunks before the image data.
    private(set) var colorProfile: ColorProfile?
    private let context: OpaquePointer
    private let stream: UnsafeMutablePointer<FILE>
    /// One decoded row, or the whole image of an interlaced PNG: RGBA, or RGB when `rgb`.
    private let decoded: UnsafeMutablePointer<UInt8>
    private let rgb: Bool
    private let interlaced: Bool
    private var row = 0

    /// Starts decoding the PNG open at `descriptor` (read from its start through a duplicate, so the caller's
    /// descriptor stays as it was).
    init(descriptor: Int32, header: PNGHeader) throws(RowDecodeFailure) {
        guard let context = spng_ctx_new(0) else { throw RowDecodeFailure(message: "libspng: out of memory") }
        let copy = Descriptor(taking: dup(descriptor))
        guard copy.number >= 0, let stream = fdopen(copy.number, "rb") else {
            spng_ctx_free(context)
            throw RowDecodeFailure(message: "cannot reopen the file: \(String(cString: strerror(errno)))")
        }
        // The stream owns the duplicate from here: `fclose` in deinit closes it.
        _ = copy.release()
        rewind(stream)
        self.context = context
        self.stream = stream
        outputSize = header.size
        interlaced = header.interlaced
        let asStored =
            header.bitDepth == 8 && (header.colorType == 2 && !header.hasTransparencyChunk || header.colorType == 6)
        rgb = asStored && header.colorType == 2
        let rowBytes = header.size.width * (rgb ? 3 : 4)
        decoded = .allocate(capacity: interlaced ? rowBytes * header.size.height : rowBytes)
        spng_set_chunk_limits(context, Self.largestChunk, PNGHeader.chunkCacheBytes)
        spng_set_image_limits(context, UInt32(header.size.width), UInt32(header.size.height))
        var status = spng_set_png_file(context, stream)
        if status == 0 {
            let flags = Int32(VITRINE_SPNG_DECODE_TRNS) | (interlaced ? 0 : Int32(VITRINE_SPNG_DECODE_PROGRESSIVE))
            let format = asStored ? Int32(VITRINE_SPNG_FMT_PNG) : Int32(VITRINE_SPNG_FMT_RGBA8)
            status = spng_decode_image(
                context, interlaced ? UnsafeMutableRawPointer(decoded) : nil,
                interlaced ? rowBytes * header.size.height : 0, format, flags)
        }
        guard status == 0 else { throw RowDecodeFailure(message: Self.message(status)) }
        var iccp = spng_iccp()
        if header.hasICCProfile, spng_get_iccp(context, &iccp) == 0, let profile = iccp.profile, iccp.profile_len > 0 {
            colorProfile = .icc(
                Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(profile), count: iccp.profile_len)))
        }
    }

    deinit {
        spng_ctx_free(context)
        fclose(stream)
        decoded.deallocate()
    }

    static func message(_ status: Int32) -> String {
        "libspng: " + (spng_strerror(status).map { String(cString: $0) } ?? "error \(status)")
    }

    func read(into rows: [UnsafeMutablePointer<UInt8>]) -> Result<Int, RowDecodeFailure> {
        let width = outputSize.width
        let rowBytes = width * (rgb ? 3 : 4)
        var count = 0
        for destination in rows {
            guard row < outputSize.height else { break }
            let source: UnsafeMutablePointer<UInt8>
            if interlaced {
                source = decoded + row * rowBytes
            } else {
                let status = spng_decode_row(context, decoded, rowBytes)
                // The call that decodes the last row answers SPNG_EOI rather than 0.
                guard status == 0 || status == Int32(VITRINE_SPNG_EOI) else {
                    return .failure(RowDecodeFailure(message: "\(Self.message(status)) at row \(row)"))
                }
                source = decoded
            }
            if rgb {
                ColorConversion.rgbToBGRX(source, into: destination, pixelCount: width)
            } else {
                ColorConversion.rgbaToBGRA(source, into: destination, pixelCount: width)
            }
            row += 1
            count += 1
        }
        return .success(count)
    }

    func finish() -> String? {
        row == outputSize.height ? nil : "the decoder stopped at row \(row) of \(outputSize.height)"
    }
}
