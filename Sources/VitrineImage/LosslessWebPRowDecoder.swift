import VitrineCore

/// A still lossless WebP decoded row by row by `VP8LDecoder`, at full size (the resampler reduces it): the coded
/// data is read from the file as it is needed and the picture is never held whole. The decoding thread
/// entropy-decodes; the inverse transforms run on the resampling thread (`finisher`), so a lossless photo keeps
/// both cores busy. Rows come as BGRA, straight alpha, as the format stores them.
final class LosslessWebPRowDecoder: RowDecoder {
    let outputSize: Size
    var rowBatch: Int { 16 }
    var warning: String? { nil }
    private(set) var colorProfile: ColorProfile?
    private let decoder: VP8LDecoder

    init(file: borrowing PhotoFile, header: WebPHeader) throws(RowDecodeFailure) {
        guard let range = header.losslessData else { throw RowDecodeFailure(message: "no VP8L bitstream") }
        guard range.upperBound <= file.byteCount else {
            throw RowDecodeFailure(message: "the file ends inside the VP8L chunk (truncated)")
        }
        if let icc = header.iccRange, !icc.isEmpty, icc.count <= 4 << 20,
            let bytes = try? file.read(offset: icc.lowerBound, count: icc.count), bytes.count == icc.count
        {
            colorProfile = .icc(bytes)
        }
        do {
            decoder = try VP8LDecoder(descriptor: file.descriptor, range: range)
        } catch {
            throw RowDecodeFailure(message: "lossless WebP: \(error.message)")
        }
        guard Size(width: decoder.width, height: decoder.height) == header.size else {
            throw RowDecodeFailure(
                message: "the VP8L bitstream is \(decoder.width)x\(decoder.height), the file says \(header.size)")
        }
        outputSize = header.size
    }

    var finisher: RowFinisher? {
        let decoder = self.decoder
        return RowFinisher { row, pixels in
            decoder.finish(row: row, pixels: UnsafeMutableRawPointer(pixels).assumingMemoryBound(to: UInt32.self))
        }
    }

    func read(into rows: [UnsafeMutablePointer<UInt8>]) -> Result<Int, RowDecodeFailure> {
        var count = 0
        for destination in rows {
            do {
                try decoder.nextCodedRow(
                    into: UnsafeMutableRawPointer(destination).assumingMemoryBound(to: UInt32.self))
            } catch {
                return .failure(RowDecodeFailure(message: "lossless WebP: \(error.message)"))
            }
            count += 1
        }
        return .success(count)
    }

    func finish() -> String? { nil }
}
