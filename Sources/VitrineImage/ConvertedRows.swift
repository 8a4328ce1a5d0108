import VitrineCore

/// A decoder whose rows are converted in place as they come, on the decoding thread, so a conversion costs no
/// buffer of its own: colour management to sRGB, then alpha resolved (composed over the background, or
/// premultiplied with alpha kept for the resampler and `BlurFill` to compose over the blurred fill). Alpha comes
/// after colour management, which converts colours, not coverage.
final class ConvertedRows: RowDecoder {
    private let decoder: any RowDecoder
    private let convert: (UnsafeMutablePointer<UInt8>, Int) -> Void

    /// `convert(row, pixelCount)` changes one decoded row.
    init(_ decoder: any RowDecoder, convert: @escaping (UnsafeMutablePointer<UInt8>, Int) -> Void) {
        self.decoder = decoder
        self.convert = convert
    }

    /// The decoder's rows converted to sRGB by `transform`.
    convenience init(_ decoder: any RowDecoder, transform: ColorTransform) {
        self.init(decoder) { transform.apply($0, pixelCount: $1) }
    }

    /// The decoder's straight-alpha rows composed over `background`, or premultiplied when it is nil.
    convenience init(_ decoder: any RowDecoder, alphaOver background: RGBColor?) {
        self.init(decoder) { row, pixels in
            if let background {
                ColorConversion.composeBGRA(row, pixelCount: pixels, over: background)
            } else {
                ColorConversion.premultiplyBGRA(row, pixelCount: pixels)
            }
        }
    }

    var outputSize: Size { decoder.outputSize }
    var rowBatch: Int { decoder.rowBatch }
    var warning: String? { decoder.warning }
    var colorProfile: ColorProfile? { decoder.colorProfile }
    func finish() -> String? { decoder.finish() }

    /// When the decoder leaves work for the resampling thread, the conversion follows it there: it needs the
    /// finished row.
    var finisher: RowFinisher? {
        guard let inner = decoder.finisher else { return nil }
        let (convert, width) = (self.convert, outputSize.width)
        return RowFinisher { row, pixels in
            inner.finish(row, pixels)
            convert(pixels, width)
        }
    }

    func read(into rows: [UnsafeMutablePointer<UInt8>]) -> Result<Int, RowDecodeFailure> {
        let result = decoder.read(into: rows)
        if decoder.finisher == nil, case .success(let count) = result {
            for row in rows.prefix(count) { convert(row, outputSize.width) }
        }
        return result
    }
}
