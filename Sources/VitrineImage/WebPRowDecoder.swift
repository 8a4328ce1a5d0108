import CWebP
import VitrineCore

/// One libwebp decode: the file is read into memory (libwebp decodes from memory) and decoded in one call straight
/// to `outputSize`, which libwebp's scaler reaches while decoding, so a 4000-pixel WebP for a 1080p panel never
/// exists at full size. An animation's first frame is composed on its canvas at full size. The rows are then
/// handed out of that picture as libwebp wrote them: BGRA, straight alpha.
final class WebPRowDecoder: RowDecoder {
    let outputSize: Size
    var rowBatch: Int { 16 }
    var warning: String? { nil }
    private(set) var colorProfile: ColorProfile?
    private let pixels: UnsafeMutablePointer<UInt8>
    private var row = 0

    init(file: borrowing PhotoFile, header: WebPHeader, outputSize: Size) throws(RowDecodeFailure) {
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, file.byteCount), alignment: 16)
        defer { bytes.deallocate() }
        let filled: Int
        do {
            filled = try file.readFully(into: bytes, offset: 0)
        } catch {
            throw RowDecodeFailure(message: error.reasonText)
        }
        guard let data = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw RowDecodeFailure(message: "the file is empty")
        }
        if let range = header.iccRange, range.upperBound <= filled, !range.isEmpty {
            colorProfile = .icc(Array(UnsafeRawBufferPointer(start: data + range.lowerBound, count: range.count)))
        }
        self.outputSize = outputSize
        pixels = .allocate(capacity: outputSize.pixelCount * 4)
        let (width, height) = (Int32(outputSize.width), Int32(outputSize.height))
        if header.animated {
            guard vitrine_webp_first_frame(data, filled, pixels, width, height) != 0 else {
                throw RowDecodeFailure(message: "libwebp cannot decode the animation's first frame")
            }
        } else {
            let status = vitrine_webp_decode(data, filled, pixels, width, height, outputSize != header.size ? 1 : 0)
            guard status == 0 else { throw RowDecodeFailure(message: "libwebp: \(Self.describe(status))") }
        }
    }

    deinit { pixels.deallocate() }

    /// libwebp's VP8StatusCode in words.
    static func describe(_ status: Int32) -> String {
        switch status {
        case 1: return "out of memory"
        case 2: return "invalid parameter"
        case 3: return "corrupt bitstream"
        case 4: return "unsupported feature"
        case 5: return "suspended"
        case 6: return "decoding was aborted"
        case 7: return "not enough data (truncated file)"
        default: return "error \(status)"
        }
    }

    func read(into rows: [UnsafeMutablePointer<UInt8>]) -> Result<Int, RowDecodeFailure> {
        let rowBytes = outputSize.width * 4
        var count = 0
        for destination in rows where row < outputSize.height {
            destination.update(from: pixels + row * rowBytes, count: rowBytes)
            row += 1
            count += 1
        }
        return .success(count)
    }

    func finish() -> String? { nil }
}
