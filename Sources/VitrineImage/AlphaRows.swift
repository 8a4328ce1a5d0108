import VitrineCore

/// A decoder of a photo with alpha whose straight BGRA rows are resolved as they come, on the decoding thread and
/// after colour management (which converts colours, not coverage): composed over the background, or premultiplied
/// with alpha kept for the resampler and `BlurFill` to compose over the blurred fill.
final class AlphaRows: RowDecoder {
    enum Mode {
        case over(RGBColor)
        case premultiplied
    }

    private let decoder: any RowDecoder
    private let mode: Mode

    init(_ decoder: any RowDecoder, mode: Mode) {
        self.decoder = decoder
        self.mode = mode
    }

    var outputSize: Size { decoder.outputSize }
    var rowBatch: Int { decoder.rowBatch }
    var warning: String? { decoder.warning }
    var colorProfile: ColorProfile? { decoder.colorProfile }
    func finish() -> String? { decoder.finish() }

    func read(into rows: [UnsafeMutablePointer<UInt8>]) -> Result<Int, RowDecodeFailure> {
        let result = decoder.read(into: rows)
        if case .success(let count) = result {
            let width = outputSize.width
            for row in rows.prefix(count) {
                switch mode {
                case .over(let background): ColorConversion.composeBGRA(row, pixelCount: width, over: background)
                case .premultiplied: ColorConversion.premultiplyBGRA(row, pixelCount: width)
                }
            }
        }
        return result
    }
}
