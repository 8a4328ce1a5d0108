import CFFmpeg
import VitrineCore

/// A clip's first picture as rows, for everything that shows a clip as a still: the slide before it plays (a
/// crossfade into the clip fades into this), the web remote's and MQTT's picture, thumbnails and renditions. Decoded
/// in software (the hardware decoder, where there is one, is the playing clip's), scaled by libswscale to
/// `outputSize` (no larger than the box needs, as a WebP's scaled decode) and held once.
final class ClipPosterDecoder: RowDecoder {
    let outputSize: Size
    var rowBatch: Int { 16 }
    private let pixels: UnsafeMutableRawPointer
    private var nextRow = 0

    init(path: String, outputSize: Size) throws(ImageError) {
        self.outputSize = outputSize
        let file = try ClipFile(path: path)
        let decoder = try ClipDecoder(file: file, preference: .software, threads: 1)
        guard let picture = try decoder.next() else {
            throw ImageError(file: path, reason: .damaged(.clip, "no picture decodes"))
        }
        pixels = .allocate(byteCount: outputSize.pixelCount * 4, alignment: 64)
        guard ClipScaler().scale(picture, into: pixels, target: outputSize, stride: outputSize.width * 4) else {
            pixels.deallocate()
            throw ImageError(file: path, reason: .decodeFailed("cannot scale the first picture to \(outputSize)"))
        }
    }

    deinit { pixels.deallocate() }

    func read(into rows: [UnsafeMutablePointer<UInt8>]) -> Result<Int, RowDecodeFailure> {
        let count = min(rows.count, outputSize.height - nextRow)
        let rowBytes = outputSize.width * 4
        for index in 0..<count {
            rows[index].update(
                from: (pixels + (nextRow + index) * rowBytes).assumingMemoryBound(to: UInt8.self), count: rowBytes)
        }
        nextRow += count
        return .success(count)
    }

    func finish() -> String? { nil }
    var warning: String? { nil }
}
