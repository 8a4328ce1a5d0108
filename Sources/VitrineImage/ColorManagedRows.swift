import VitrineCore

/// A decoder whose rows are converted to sRGB as they come: the transform runs on the decoding thread, row by row,
/// so colour management costs no buffer of its own.
final class ColorManagedRows: RowDecoder {
    private let decoder: any RowDecoder
    private let transform: ColorTransform

    init(_ decoder: any RowDecoder, transform: ColorTransform) {
        self.decoder = decoder
        self.transform = transform
    }

    var outputSize: Size { decoder.outputSize }
    var rowBatch: Int { decoder.rowBatch }
    var warning: String? { decoder.warning }
    func finish() -> String? { decoder.finish() }

    func read(into rows: [UnsafeMutablePointer<UInt8>]) -> Result<Int, RowDecodeFailure> {
        let result = decoder.read(into: rows)
        if case .success(let count) = result {
            for row in rows.prefix(count) { transform.apply(row, pixelCount: outputSize.width) }
        }
        return result
    }
}
