import CFFmpeg
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A clip's first picture as rows, for everything that shows a clip as a still: the slide before it plays (a
/// crossfade fades into this), the web remote's and MQTT's picture, thumbnails and renditions. Decoded in software
/// (the hardware decoder, where there is one, is the playing clip's), scaled by libswscale to `outputSize` (no
/// larger than the box needs, as a WebP's scaled decode) and held once.
///
/// For the player's slide (`judging`), the clip is also judged: where it would play in software, the pictures of
/// its first quarter second are decoded and timed, and a clip the board cannot decode at half its rate is refused
/// (`ImageError.Reason.tooSlow`), so it is skipped with one line rather than shown as a slide show of its own.
final class ClipPosterDecoder: RowDecoder {
    let outputSize: Size
    var rowBatch: Int { 16 }
    private let pixels: UnsafeMutableRawPointer
    private var nextRow = 0

    init(path: String, outputSize: Size, judging preference: VideoDecoding? = nil, isCancelled: (() -> Bool)? = nil)
        throws(ImageError)
    {
        self.outputSize = outputSize
        let file = try ClipFile(path: path)
        var judged = preference != nil
        if let preference, preference != .software {
            // The decoder the clip would play with, opened and closed again: the hardware plays at its own pace.
            // A preference the board cannot meet (`v4l2m2m` with no such device) refuses the clip here.
            judged = !(try ClipDecoder(file: file, preference: preference, threads: 1).isHardware)
        }
        let decoder = try ClipDecoder(file: file, preference: .software, threads: 1)
        guard let picture = try decoder.next() else {
            throw ImageError(file: path, reason: .damaged(.clip, "no picture decodes"))
        }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: outputSize.pixelCount * 4, alignment: 64)
        guard ClipScaler().scale(picture, into: buffer, target: outputSize, stride: outputSize.width * 4) else {
            buffer.deallocate()
            throw ImageError(file: path, reason: .decodeFailed("cannot scale the first picture to \(outputSize)"))
        }
        if judged {
            let measured: ClipSpeed?
            do throws(ImageError) {
                measured = try Self.measure(decoder, header: file.header, path: path, isCancelled: isCancelled)
            } catch {
                buffer.deallocate()
                throw error
            }
            if let measured, measured.tooSlow(frameRate: file.header.frameRate) {
                buffer.deallocate()
                throw ImageError(file: path, reason: .tooSlow(Self.verdict(measured, header: file.header)))
            }
        }
        pixels = buffer
    }

    deinit { pixels.deallocate() }

    /// Decodes on from the second picture, on this thread alone, until `ClipSpeed.enough`; nil for a clip of one
    /// picture (nothing to keep pace with).
    private static func measure(
        _ decoder: ClipDecoder, header: ClipHeader, path: String, isCancelled: (() -> Bool)?
    ) throws(ImageError) -> ClipSpeed? {
        let started = ThreadCPUClock.seconds()
        var pictures = 0
        while !ClipSpeed.enough(
            pictures: pictures, cpuSeconds: ThreadCPUClock.seconds() - started, frameRate: header.frameRate)
        {
            if let isCancelled, isCancelled() { throw ImageError(file: path, reason: .cancelled) }
            guard try decoder.next() != nil else { break }
            pictures += 1
        }
        guard pictures > 0 else { return nil }
        let processors = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return ClipSpeed(
            pictures: pictures, cpuSeconds: ThreadCPUClock.seconds() - started,
            threads: min(ClipDecoder.softwareThreads, processors))
    }

    /// The refusal's words: what the clip is, how fast this board decodes it, and what plays instead.
    private static func verdict(_ speed: ClipSpeed, header: ClipHeader) -> String {
        "this \(header.kind) clip decodes at \(speed.rateText) in software (measured on its first pictures), under "
            + "half its rate; a smaller copy plays (`vitrine renditions`, see \"Preparing clips\" in the README)"
    }

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
