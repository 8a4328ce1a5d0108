import VitrineCore

/// A decoder that has started on a photo and hands out its rows, top to bottom, as BGRX (blue, green, red, one
/// unused byte), or for a photo whose header says it has alpha as BGRA with straight alpha (`ConvertedRows`
/// composes it), `outputSize.width` pixels each.
protocol RowDecoder: AnyObject {
    var outputSize: Size { get }
    /// How many rows the decoder likes to be asked for at once.
    var rowBatch: Int { get }
    /// Decodes the next rows into `rows`; the count decoded, or the decoder's message.
    func read(into rows: [UnsafeMutablePointer<UInt8>]) -> Result<Int, RowDecodeFailure>
    /// After the last row: reads to the end of the image, where truncation shows; the message when it failed.
    func finish() -> String?
    /// What the decoder warned about in a photo it decoded anyway (nil: nothing).
    var warning: String? { get }
    /// The colour space the file declares, when the decoder reads it (nil: untagged, or read elsewhere).
    var colorProfile: ColorProfile? { get }
    /// Work left on each row after `read`, done on the resampling thread (so the two threads share a slow
    /// decode): applied once to every row, in order, in place, before the row is resampled. Nil: none.
    var finisher: RowFinisher? { get }
}

extension RowDecoder {
    var colorProfile: ColorProfile? { nil }
    var finisher: RowFinisher? { nil }
}

/// What is left to do on a decoded row: `finish(row, pixels)`, called on the resampling thread for rows 0, 1,
/// 2, ... in turn.
final class RowFinisher: @unchecked Sendable {
    // @unchecked: `finish` and what it captures are used by the resampling thread alone while the decode runs;
    // the decoding thread only hands the rows over through `RowPipe`, which orders the two.
    let finish: (Int, UnsafeMutablePointer<UInt8>) -> Void

    init(_ finish: @escaping (Int, UnsafeMutablePointer<UInt8>) -> Void) { self.finish = finish }
}

struct RowDecodeFailure: Error {
    var message: String
}
