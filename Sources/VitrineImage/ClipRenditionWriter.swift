import CFFmpeg
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes a clip's rendition (`NAME@WxH.mp4`): H.264 in MP4 at the rendition's size, at most `maxFrameRate`
/// pictures a second, which a Raspberry Pi's hardware decoder plays where the phone's HEVC, 4K or 60 fps original
/// would not. libx264 through libavcodec where FFmpeg has it (Debian's does), else the board's own H.264 encoder. A
/// phone's sideways clip keeps its display matrix (stored sideways, shown upright, as the original). Its sound is
/// copied when MP4 takes it as it is (AAC, MP3), else left out and said. Like a photo's rendition it is written
/// under a hidden temporary name, synced, then renamed, so the real name only ever holds a whole file.
public enum ClipRenditionWriter {
    /// What the rendition came to, for the command's line.
    public struct Written: Sendable, Equatable {
        public var encoder: String
        public var pictures: Int
        /// Pictures left out to keep to `maxFrameRate`.
        public var passedOver: Int
        public var sound: Bool
    }

    public static let maxFrameRate = 30.0

    /// Writes `original` at the upright `size` (even sides) to `destination`.
    public static func write(original: String, size upright: Size, to destination: String) throws(ImageError)
        -> Written
    {
        let file = try ClipFile(path: original)
        let decoder = try ClipDecoder(file: file, preference: .auto)
        let stored = file.header.orientation.swapsAxes ? upright.transposed : upright
        let target = Size(width: max(2, stored.width & ~1), height: max(2, stored.height & ~1))
        let temporary = RenditionWriter.temporaryPath(for: destination)
        do throws(ImageError) {
            let encoder = try Encoder(file: file, size: target, temporary: temporary, destination: destination)
            let written = try encoder.encode(decoder: decoder, original: original)
            try encoder.finish()
            try RenditionWriter.publish(temporary, as: destination)
            return written
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// The encoder and the muxer of one rendition; one thread uses it.
    private final class Encoder {
        private var output: UnsafeMutablePointer<AVFormatContext>?
        private var codec: UnsafeMutablePointer<AVCodecContext>?
        private var picture: UnsafeMutablePointer<AVFrame>?
        private var packet: UnsafeMutablePointer<AVPacket>?
        private var scaler: OpaquePointer?
        private var scaled: (format: Int32, size: Size)?
        private let video: UnsafeMutablePointer<AVStream>
        private var sound: (from: UnsafeMutablePointer<AVStream>, to: UnsafeMutablePointer<AVStream>)?
        private let destination: String
        private let size: Size
        private let rate: Double
        let name: String
        /// The clip's time base for the encoder: 90 kHz, MP4's usual.
        private static let ticks: Int32 = 90_000

        init(file: ClipFile, size: Size, temporary: String, destination: String) throws(ImageError) {
            self.destination = destination
            self.size = size
            rate = min(ClipRenditionWriter.maxFrameRate, file.header.frameRate > 0 ? file.header.frameRate : 30)
            let result = vitrine_av_create_mp4(&output, temporary)
            guard result >= 0, let output else {
                throw ImageError(
                    file: destination,
                    reason: .cannotWrite(FileError(path: temporary, operation: "create \(temporary)", errno: -result)))
            }
            guard
                let encoder = avcodec_find_encoder_by_name("libx264") ?? avcodec_find_encoder(AV_CODEC_ID_H264),
                let context = avcodec_alloc_context3(encoder)
            else { throw ImageError(file: destination, reason: .encodeFailed("FFmpeg has no H.264 encoder")) }
            codec = context
            name = String(cString: encoder.pointee.name)
            context.pointee.width = Int32(size.width)
            context.pointee.height = Int32(size.height)
            context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
            context.pointee.time_base = AVRational(num: 1, den: Self.ticks)
            context.pointee.framerate = AVRational(num: Int32((rate * 1000).rounded()), den: 1000)
            context.pointee.gop_size = Int32((rate * 2).rounded())
            if let parameters = file.stream?.pointee.codecpar?.pointee {
                context.pointee.colorspace = parameters.color_space
                context.pointee.color_primaries = parameters.color_primaries
                context.pointee.color_trc = parameters.color_trc
            }
            context.pointee.color_range = AVCOL_RANGE_MPEG
            if vitrine_av_wants_global_header(output) != 0 { vitrine_av_set_global_header(context) }
            if name == "libx264" {
                // Quality 21 at the `veryfast` preset: a 1080p30 phone clip at a few Mbit/s, encoded faster than it
                // plays on this machine; the High profile every Pi decoder takes.
                av_opt_set(context.pointee.priv_data, "preset", "veryfast", 0)
                av_opt_set(context.pointee.priv_data, "crf", "21", 0)
                av_opt_set(context.pointee.priv_data, "profile", "high", 0)
            } else {
                context.pointee.bit_rate = Int64(Double(size.pixelCount) * rate * 0.1)
            }
            var opened = avcodec_open2(context, encoder, nil)
            guard opened >= 0, let stream = avformat_new_stream(output, nil) else {
                throw ImageError(
                    file: destination, reason: .encodeFailed("cannot open \(name): \(ClipFile.describe(opened))"))
            }
            video = stream
            opened = avcodec_parameters_from_context(stream.pointee.codecpar, context)
            stream.pointee.time_base = context.pointee.time_base
            if let source = file.stream { vitrine_av_copy_rotation(stream, source) }
            if let index = file.audioIndex, let from = file.context?.pointee.streams[Int(index)],
                let parameters = from.pointee.codecpar,
                avformat_query_codec(output.pointee.oformat, parameters.pointee.codec_id, FF_COMPLIANCE_NORMAL) == 1,
                let to = avformat_new_stream(output, nil), avcodec_parameters_copy(to.pointee.codecpar, parameters) >= 0
            {
                to.pointee.codecpar.pointee.codec_tag = 0
                to.pointee.time_base = from.pointee.time_base
                sound = (from, to)
            }
            let header = vitrine_av_write_mp4_header(output)
            guard opened >= 0, header >= 0 else {
                throw ImageError(
                    file: destination,
                    reason: .encodeFailed("cannot start the MP4: \(ClipFile.describe(min(opened, header)))"))
            }
            picture = av_frame_alloc()
            packet = av_packet_alloc()
            guard let picture, packet != nil else {
                throw ImageError(file: destination, reason: .encodeFailed("out of memory for a picture"))
            }
            picture.pointee.format = AV_PIX_FMT_YUV420P.rawValue
            picture.pointee.width = Int32(size.width)
            picture.pointee.height = Int32(size.height)
            guard av_frame_get_buffer(picture, 0) >= 0 else {
                throw ImageError(file: destination, reason: .encodeFailed("out of memory for a picture"))
            }
        }

        deinit {
            sws_freeContext(scaler)
            av_packet_free(&packet)
            av_frame_free(&picture)
            avcodec_free_context(&codec)
            vitrine_av_close_mp4(&output)
        }

        /// Every picture of the clip, at most `rate` a second, and its sound's packets as they are read.
        func encode(decoder: ClipDecoder, original: String) throws(ImageError) -> Written {
            var written = Written(encoder: name, pictures: 0, passedOver: 0, sound: sound != nil)
            var failure: Int32 = 0
            if let sound, let output {
                decoder.otherPackets = (
                    sound.from.pointee.index,
                    { packet in
                        av_packet_rescale_ts(packet, sound.from.pointee.time_base, sound.to.pointee.time_base)
                        packet.pointee.stream_index = sound.to.pointee.index
                        let result = av_interleaved_write_frame(output, packet)
                        if result < 0, failure == 0 { failure = result }
                    }
                )
            }
            var next = -Double.infinity
            var last: Int64 = -1
            while let frame = try decoder.next() {
                if failure < 0 { break }
                let stamp = vitrine_av_frame_time(frame)
                let time = stamp == vitrine_av_nopts() ? Double(written.pictures) / rate : decoder.seconds(stamp)
                // A 60 fps original keeps every other picture; a picture's time is its own, not a new grid's.
                guard time >= next - 0.25 / rate else {
                    written.passedOver += 1
                    continue
                }
                next = max(next, time) + 1 / rate
                let pts = max(last + 1, Int64((time * Double(Self.ticks)).rounded()))
                last = pts
                try scale(frame)
                picture?.pointee.pts = pts
                try send(picture)
                written.pictures += 1
            }
            decoder.otherPackets = nil
            if failure < 0 {
                throw ImageError(
                    file: destination, reason: .encodeFailed("cannot write: \(ClipFile.describe(failure))"))
            }
            guard written.pictures > 0 else {
                throw ImageError(file: original, reason: .damaged(.clip, "no picture could be decoded"))
            }
            try send(nil)
            return written
        }

        /// The trailer (the index, moved to the start), and the file closed.
        func finish() throws(ImageError) {
            let result = av_write_trailer(output)
            vitrine_av_close_mp4(&output)
            guard result >= 0 else {
                throw ImageError(
                    file: destination, reason: .encodeFailed("cannot finish: \(ClipFile.describe(result))"))
            }
        }

        private func scale(_ frame: UnsafeMutablePointer<AVFrame>) throws(ImageError) {
            guard let picture else { return }
            let source = Size(width: Int(frame.pointee.width), height: Int(frame.pointee.height))
            if scaled?.format != frame.pointee.format || scaled?.size != source {
                sws_freeContext(scaler)
                scaler = sws_getContext(
                    Int32(source.width), Int32(source.height), AVPixelFormat(rawValue: frame.pointee.format),
                    Int32(size.width), Int32(size.height), AV_PIX_FMT_YUV420P, Int32(SWS_BICUBIC), nil, nil, nil)
                guard scaler != nil else {
                    scaled = nil
                    throw ImageError(file: destination, reason: .encodeFailed("cannot scale \(source) to \(size)"))
                }
                vitrine_sws_describe_yuv(scaler, frame, vitrine_sws_matrix(frame))
                scaled = (frame.pointee.format, source)
            }
            guard vitrine_sws_scale_frame(scaler, frame, picture) == Int32(size.height) else {
                throw ImageError(file: destination, reason: .encodeFailed("cannot scale \(source) to \(size)"))
            }
        }

        /// Hands a picture (nil: the end) to the encoder and writes what it gives back.
        private func send(_ frame: UnsafeMutablePointer<AVFrame>?) throws(ImageError) {
            guard let codec, let packet, let output else { return }
            var result = avcodec_send_frame(codec, frame)
            guard result >= 0 else {
                throw ImageError(file: destination, reason: .encodeFailed("\(name): \(ClipFile.describe(result))"))
            }
            while true {
                result = avcodec_receive_packet(codec, packet)
                if result == vitrine_av_again() || result == vitrine_av_eof() { return }
                guard result >= 0 else {
                    throw ImageError(file: destination, reason: .encodeFailed("\(name): \(ClipFile.describe(result))"))
                }
                // A picture lasts until the next: the muxer's edit list would otherwise end at the last picture's
                // start, and players leave that picture out.
                if packet.pointee.duration <= 0 {
                    packet.pointee.duration = Int64((Double(Self.ticks) / rate).rounded())
                }
                av_packet_rescale_ts(packet, codec.pointee.time_base, video.pointee.time_base)
                packet.pointee.stream_index = video.pointee.index
                result = av_interleaved_write_frame(output, packet)
                guard result >= 0 else {
                    throw ImageError(
                        file: destination, reason: .encodeFailed("cannot write: \(ClipFile.describe(result))"))
                }
            }
        }
    }
}
