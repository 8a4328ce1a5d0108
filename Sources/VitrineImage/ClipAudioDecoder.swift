import CFFmpeg
import VitrineCore
import VitrinePlatform

/// libavcodec on a clip's sound stream (AAC from a phone, Opus or Vorbis in WebM), resampled by libswresample to
/// interleaved 16-bit stereo at the device's rate, on the clip's decoding thread. A damaged packet is passed over:
/// the sound has a gap, the clip plays on.
final class ClipAudioDecoder {
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var resampler: OpaquePointer?
    private let file: ClipFile
    let streamIndex: Int32
    private let rate: Int
    /// The codec as a user would name it, with its rate: "aac 44100 Hz".
    let name: String
    /// Added to every time (a loop's later passes count on from the first).
    var offset = 0.0

    init(file: ClipFile, rate: Int) throws(ImageError) {
        self.file = file
        self.rate = rate
        guard let index = file.audioIndex, let stream = file.context?.pointee.streams[Int(index)],
            let parameters = stream.pointee.codecpar
        else { throw ImageError(file: file.path, reason: .damaged(.clip, "no sound stream")) }
        self.streamIndex = index
        do {
            try LazyLibrary.swresample.load()
        } catch {
            throw ImageError(file: file.path, reason: .unsupportedVariant(.clip, "\(error)"))
        }
        let codecName = String(cString: avcodec_get_name(parameters.pointee.codec_id))
        guard let decoder = avcodec_find_decoder(parameters.pointee.codec_id),
            let context = avcodec_alloc_context3(decoder)
        else { throw ImageError(file: file.path, reason: .unsupportedVariant(.clip, "no decoder for \(codecName)")) }
        codec = context
        var result = avcodec_parameters_to_context(context, parameters)
        if result >= 0 { result = avcodec_open2(context, decoder, nil) }
        guard result >= 0 else {
            throw ImageError(
                file: file.path, reason: ClipFile.failure(result, doing: "decode the sound of", path: file.path))
        }
        name = "\(codecName) \(context.pointee.sample_rate) Hz"
        resampler = vitrine_swr_stereo(context, Int32(rate))
        frame = av_frame_alloc()
        guard resampler != nil, frame != nil else {
            throw ImageError(file: file.path, reason: .unsupportedVariant(.clip, "cannot convert \(name) to stereo"))
        }
    }

    deinit {
        av_frame_free(&frame)
        swr_free(&resampler)
        avcodec_free_context(&codec)
    }

    func owns(_ packet: UnsafePointer<AVPacket>) -> Bool { packet.pointee.stream_index == streamIndex }

    /// Decodes `packet` (consumed) and hands its samples to `sound`.
    func decode(_ packet: UnsafeMutablePointer<AVPacket>, into sound: ClipSound) {
        guard let codec, let frame else { return }
        let sent = avcodec_send_packet(codec, packet)
        av_packet_unref(packet)
        guard sent >= 0 else { return }
        while avcodec_receive_frame(codec, frame) >= 0 {
            defer { av_frame_unref(frame) }
            let count = Int(frame.pointee.nb_samples)
            guard count > 0, let resampler else { continue }
            let stamp = vitrine_av_frame_time(frame)
            guard stamp != vitrine_av_nopts() else { continue }
            let inRate = max(1, Int(codec.pointee.sample_rate))
            let capacity = count * rate / inRate + 256
            var samples = [Int16](repeating: 0, count: capacity * 2)
            let converted = samples.withUnsafeMutableBufferPointer { buffer -> Int32 in
                guard let base = buffer.baseAddress else { return -1 }
                return vitrine_swr_convert_frame(resampler, frame, base, Int32(capacity))
            }
            guard converted > 0 else { continue }
            samples.removeLast(samples.count - Int(converted) * 2)
            sound.feed(time: offset + file.seconds(stamp, stream: streamIndex), samples: samples)
        }
    }

    /// Back to the start (a loop): what the decoder held is forgotten.
    func rewind(offset: Double) {
        self.offset = offset
        if let codec { avcodec_flush_buffers(codec) }
    }
}
