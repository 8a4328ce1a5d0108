import CFFmpeg
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An open clip: libavformat's demuxer on the file, its video stream chosen. One thread uses it; `interrupt()` may
/// be called from any thread and ends a read under way (a share that stalls, a clip no longer wanted), after
/// which every read fails.
final class ClipFile: @unchecked Sendable {
    // @unchecked: the demuxer is used by the one thread that opened it; only the interrupt word crosses, through
    // atomic loads and stores in C.
    let path: String
    private(set) var context: UnsafeMutablePointer<AVFormatContext>?
    /// The word libavformat's interrupt callback reads; heap-allocated, so its address stays put for C.
    private let interruptWord = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    let videoIndex: Int32
    let audioIndex: Int32?
    let header: ClipHeader

    /// Opens and probes the file (a few hundred kilobytes at most of its start, and its index), refusing what
    /// cannot be played: no video stream, a codec FFmpeg does not decode, a size of 0 or past the pixel cap.
    init(path: String) throws(ImageError) {
        self.path = path
        interruptWord.initialize(to: 0)
        do {
            try LazyLibrary.avformat.load()
            try LazyLibrary.avcodec.load()
            try LazyLibrary.avutil.load()
            try LazyLibrary.swscale.load()
        } catch {
            interruptWord.deallocate()
            throw ImageError(file: path, reason: .unsupportedVariant(.clip, "\(error)"))
        }
        _ = ClipFile.quietLogs
        var opened: UnsafeMutablePointer<AVFormatContext>?
        let result = vitrine_av_open(&opened, path, interruptWord)
        guard result >= 0, let opened else {
            interruptWord.deallocate()
            throw ImageError(file: path, reason: ClipFile.failure(result, doing: "open", path: path))
        }
        let video: Int32
        let audio: Int32?
        let made: ClipHeader
        do throws(ImageError) {
            let read = avformat_find_stream_info(opened, nil)
            guard read >= 0 else {
                throw ImageError(file: path, reason: ClipFile.failure(read, doing: "read", path: path))
            }
            let found = av_find_best_stream(opened, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
            guard found >= 0, let stream = opened.pointee.streams[Int(found)] else {
                throw ImageError(file: path, reason: .damaged(.clip, "no video stream"))
            }
            let best = av_find_best_stream(opened, AVMEDIA_TYPE_AUDIO, -1, found, nil, 0)
            made = try ClipFile.describe(opened, stream: stream, hasAudio: best >= 0, path: path)
            video = found
            audio = best >= 0 ? best : nil
        } catch {
            var owned: UnsafeMutablePointer<AVFormatContext>? = opened
            avformat_close_input(&owned)
            interruptWord.deallocate()
            throw error
        }
        context = opened
        videoIndex = video
        audioIndex = audio
        header = made
    }

    deinit {
        avformat_close_input(&context)
        interruptWord.deallocate()
    }

    /// Ends a read under way and every later one (any thread).
    func interrupt() { vitrine_av_raise(interruptWord) }

    var stream: UnsafeMutablePointer<AVStream>? { context?.pointee.streams[Int(videoIndex)] }

    /// The stream's time base in seconds per tick.
    var timeBase: Double {
        guard let base = stream?.pointee.time_base, base.den != 0 else { return 1.0 / 90_000 }
        return Double(base.num) / Double(base.den)
    }

    /// Seconds from the video stream's start time for a timestamp in its time base.
    func seconds(_ timestamp: Int64) -> Double {
        let start = stream?.pointee.start_time ?? vitrine_av_nopts()
        let origin = start == vitrine_av_nopts() ? 0 : start
        return Double(timestamp &- origin) * timeBase
    }

    /// Seconds on the same clock for a timestamp of another stream (the sound): its time less the video's start,
    /// so a sound that starts before the first picture (an encoder's priming) keeps its place.
    func seconds(_ timestamp: Int64, stream index: Int32) -> Double {
        guard index != videoIndex, let other = context?.pointee.streams[Int(index)], other.pointee.time_base.den != 0
        else { return seconds(timestamp) }
        let start = stream?.pointee.start_time ?? vitrine_av_nopts()
        let origin = start == vitrine_av_nopts() ? 0 : Double(start) * timeBase
        return Double(timestamp) * Double(other.pointee.time_base.num) / Double(other.pointee.time_base.den) - origin
    }

    /// The next packet of any stream into `packet`; false at the end of the file.
    func readPacket(into packet: UnsafeMutablePointer<AVPacket>) throws(ImageError) -> Bool {
        let result = av_read_frame(context, packet)
        if result == vitrine_av_eof() { return false }
        guard result >= 0 else {
            throw ImageError(file: path, reason: ClipFile.failure(result, doing: "read", path: path))
        }
        return true
    }

    /// Back to the start (a clip that loops).
    func rewind() throws(ImageError) {
        let start = stream?.pointee.start_time ?? 0
        let result = av_seek_frame(context, videoIndex, start == vitrine_av_nopts() ? 0 : start, AVSEEK_FLAG_BACKWARD)
        guard result >= 0 else {
            throw ImageError(file: path, reason: ClipFile.failure(result, doing: "seek", path: path))
        }
    }

    private static func describe(
        _ context: UnsafeMutablePointer<AVFormatContext>, stream: UnsafeMutablePointer<AVStream>, hasAudio: Bool,
        path: String
    ) throws(ImageError) -> ClipHeader {
        guard let parameters = stream.pointee.codecpar?.pointee else {
            throw ImageError(file: path, reason: .damaged(.clip, "no codec parameters"))
        }
        let codec = String(cString: avcodec_get_name(parameters.codec_id))
        guard avcodec_find_decoder(parameters.codec_id) != nil else {
            throw ImageError(file: path, reason: .unsupportedVariant(.clip, "no decoder for \(codec)"))
        }
        let size = Size(width: Int(parameters.width), height: Int(parameters.height))
        guard size.width > 0, size.height > 0 else {
            throw ImageError(file: path, reason: .damaged(.clip, "picture size \(size)"))
        }
        guard size.pixelCount <= ImageHeader.largestPixelCount else {
            throw ImageError(
                file: path,
                reason: .tooManyPixels(size, limitMegapixels: Double(ImageHeader.largestPixelCount / 1_000_000)))
        }
        let rate = stream.pointee.avg_frame_rate.den > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        let frameRate = rate.den > 0 && rate.num > 0 ? Double(rate.num) / Double(rate.den) : 0
        var duration = 0.0
        if stream.pointee.duration > 0, stream.pointee.time_base.den > 0 {
            duration =
                Double(stream.pointee.duration) * Double(stream.pointee.time_base.num)
                / Double(stream.pointee.time_base.den)
        } else if context.pointee.duration > 0 {
            duration = Double(context.pointee.duration) / Double(vitrine_av_time_base())
        }
        let format = AVPixelFormat(rawValue: parameters.format)
        let depth = av_pix_fmt_desc_get(format).map { Int($0.pointee.comp.0.depth) } ?? 8
        let apple = vitrine_av_tag(context.pointee.metadata, "com.apple.quicktime.creationdate")
        let created = apple ?? vitrine_av_tag(context.pointee.metadata, "creation_time")
        let name = context.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "?"
        return ClipHeader(
            container: name.hasPrefix("mov") ? "MP4" : name.hasPrefix("matroska") ? "Matroska" : name, codec: codec,
            size: size, orientation: ClipHeader.orientation(rotationDegrees: vitrine_av_rotation(stream)),
            frameRate: frameRate, duration: duration, bitDepth: max(8, depth), hasAudio: hasAudio,
            recorded: created.flatMap { ClipHeader.exifDate(iso: String(cString: $0)) })
    }

    /// FFmpeg's own messages go nowhere: a broken clip gets one line from Vitrine naming it, not a screenful. Set
    /// once, by the first clip (a static's initialiser runs once, whichever thread gets there first).
    private static let quietLogs: Void = av_log_set_level(AV_LOG_QUIET)

    static func failure(_ code: Int32, doing: String, path: String) -> ImageError.Reason {
        if code == vitrine_av_error(ENOENT) || code == vitrine_av_error(EACCES) || code == vitrine_av_error(EIO) {
            return .unreadable(FileError(path: path, operation: doing, errno: -code))
        }
        if code == vitrine_av_exit() { return .cancelled }
        return .damaged(.clip, "cannot \(doing) it: \(describe(code))")
    }

    static func describe(_ code: Int32) -> String {
        var text = [CChar](repeating: 0, count: 128)
        vitrine_av_describe(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
