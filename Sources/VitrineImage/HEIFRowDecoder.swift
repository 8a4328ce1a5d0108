import CHeif
import VitrineCore

/// One libheif decode of a HEIF or AVIF primary image. libheif decodes the whole image in one call (HEVC through
/// libde265, AV1 through dav1d or aom), with the HEIF transforms applied and more than 8 bits a sample reduced to
/// 8, as interleaved RGB or RGBA; the header charged the budget for that. The rows are then handed out of it as
/// BGRX, or BGRA with straight alpha when the image has an alpha plane.
final class HEIFRowDecoder: RowDecoder {
    let outputSize: Size
    var rowBatch: Int { 16 }
    var warning: String? { nil }
    let colorProfile: ColorProfile?
    private let image: OpaquePointer
    private let pixels: UnsafePointer<UInt8>
    private let stride: Int
    private let alpha: Bool
    private var row = 0

    init(file: borrowing PhotoFile, header: HEIFHeader, isCancelled: (() -> Bool)?) throws(ImageError) {
        let heif = try HEIFFile(path: file.path, descriptor: file.descriptor, fileBytes: file.byteCount)
        let format: Int32 = header.avif ? Int32(VITRINE_HEIF_COMPRESSION_AV1) : Int32(VITRINE_HEIF_COMPRESSION_HEVC)
        guard heif_have_decoder_for_format(heif_compression_format(UInt32(format))) != 0 else {
            throw ImageError(
                file: file.path,
                reason: .unsupportedVariant(
                    header.avif ? .avif : .heif,
                    "libheif here has no \(header.avif ? "AV1" : "HEVC") decoder (install libheif's plugins)"))
        }
        alpha = header.hasAlpha
        colorProfile = header.colorProfile
        let options = vitrine_heif_decoding_options()
        defer { heif_decoding_options_free(options) }
        let decoded: OpaquePointer
        switch heif.decode(
            chroma: alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, options: options,
            isCancelled: isCancelled)
        {
        case .success(let image): decoded = image
        case .failure(.cancelled): throw ImageError(file: file.path, reason: .cancelled)
        case .failure(.failed(let message)):
            throw ImageError(file: file.path, reason: .decodeFailed("libheif: \(message)"))
        }
        var rowStride: Int32 = 0
        guard let plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &rowStride) else {
            heif_image_release(decoded)
            throw ImageError(file: file.path, reason: .decodeFailed("libheif gave no interleaved RGB plane"))
        }
        image = decoded
        pixels = plane
        stride = Int(rowStride)
        outputSize = Size(
            width: Int(heif_image_get_width(decoded, heif_channel_interleaved)),
            height: Int(heif_image_get_height(decoded, heif_channel_interleaved)))
    }

    deinit { heif_image_release(image) }

    func read(into rows: [UnsafeMutablePointer<UInt8>]) -> Result<Int, RowDecodeFailure> {
        let width = outputSize.width
        var count = 0
        for destination in rows where row < outputSize.height {
            let source = pixels + row * stride
            if alpha {
                ColorConversion.rgbaToBGRA(source, into: destination, pixelCount: width)
            } else {
                ColorConversion.rgbToBGRX(source, into: destination, pixelCount: width)
            }
            row += 1
            count += 1
        }
        return .success(count)
    }

    func finish() -> String? { nil }
}
