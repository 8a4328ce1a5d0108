import CJPEG
import VitrineCore

/// One libjpeg decompression, row by row. Owns its libjpeg state and closes it on deinit.
final class JPEGDecompressor: RowDecoder {
    private let state: UnsafeMutablePointer<vitrine_jpeg>
    /// CMYK or YCCK rows come from libjpeg as CMYK and are turned into BGRX here; `inverted` is Adobe's
    /// convention (APP14) of stored inverted inks.
    private var cmyk: (inverted: Bool, width: Int)?

    init() {
        // calloc of a few kilobytes fails only when the system is out of memory.
        guard let state = vitrine_jpeg_create() else { preconditionFailure("out of memory creating a JPEG decoder") }
        self.state = state
    }

    deinit { vitrine_jpeg_destroy(state) }

    private var message: String {
        withUnsafeBytes(of: state.pointee.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// Reads the header from `descriptor` and starts decoding at `scaleNumerator`/8, to BGRX or (for CMYK and
    /// YCCK files, which libjpeg cannot convert) CMYK. Returns libjpeg's message on failure.
    func start(descriptor: Int32, scaleNumerator: Int, header: JPEGHeader) -> String? {
        let isCMYK = header.colorModel == .cmyk || header.colorModel == .ycck
        guard vitrine_jpeg_start(state, descriptor, UInt32(scaleNumerator), isCMYK ? 1 : 0) == 0 else { return message }
        if isCMYK { cmyk = (header.adobeTransform != nil, outputSize.width) }
        return nil
    }

    var outputSize: Size {
        Size(width: Int(vitrine_jpeg_output_width(state)), height: Int(vitrine_jpeg_output_height(state)))
    }

    /// How many rows libjpeg likes to be asked for at once.
    var rowBatch: Int { max(1, Int(vitrine_jpeg_row_batch(state))) }

    /// Decodes the next rows into `rows`; the count decoded, or libjpeg's message.
    func read(into rows: [UnsafeMutablePointer<UInt8>]) -> Result<Int, RowDecodeFailure> {
        var pointers: [UnsafeMutablePointer<UInt8>?] = rows
        let count = pointers.withUnsafeMutableBufferPointer { buffer in
            vitrine_jpeg_read_rows(state, buffer.baseAddress, UInt32(buffer.count))
        }
        guard count >= 0 else { return .failure(RowDecodeFailure(message: message)) }
        if let cmyk {
            for row in rows.prefix(Int(count)) {
                ColorConversion.cmykToBGRX(row, pixelCount: cmyk.width, inverted: cmyk.inverted)
            }
        }
        return .success(Int(count))
    }

    /// libjpeg's first warning and how many it gave, for a photo it decoded past damage in (nil: none).
    var warning: String? {
        let count = Int(vitrine_jpeg_warning_count(state))
        guard count > 0 else { return nil }
        var text = withUnsafeBytes(of: state.pointee.warning) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        // The file ended, but after all the data the picture needed: only the end marker is missing.
        if vitrine_jpeg_ran_out(state) != 0 && count == 1 { text = "no end marker after the picture (\(text))" }
        return count == 1 ? text : "\(text) (and \(count - 1) more warnings)"
    }

    /// Reads to the end of the image, where truncation shows.
    func finish() -> String? {
        vitrine_jpeg_finish(state) == 0 ? nil : message
    }
}
