import CFFmpeg
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// libavcodec on a clip's video stream: the board's hardware decoder where it has one for the codec (the kernel's
/// V4L2 memory-to-memory device, as on the Raspberry Pi, or VA-API), else software on two threads. Which one is in
/// use is `name`, said in the log and in `status`, never silent. One thread uses it.
final class ClipDecoder {
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    /// A hardware frame's pixels copied into memory the scaler can read (VA-API surfaces are on the GPU).
    private var transferred: UnsafeMutablePointer<AVFrame>?
    /// The decoder as a user would name it: "h264 (software)", "h264_v4l2m2m (V4L2 hardware)", "hevc (VA-API)".
    let name: String
    let isHardware: Bool
    private let file: ClipFile
    private var drained = false
    /// The end of the file has been read (packets may still wait in `pending`).
    private var fileEnded = false
    /// Video packets read ahead while the sound needed feeding and no picture frame was free, in file order.
    private var pending: [UnsafeMutablePointer<AVPacket>] = []
    private var pendingBytes = 0
    /// Where another stream's packets go as they are read (the sound: decoded to be played, or copied into a
    /// rendition); each is the taker's, to unref. Others are passed over.
    var otherPackets: (index: Int32, take: (UnsafeMutablePointer<AVPacket>) -> Void)?
    /// The threads a software decoder plays a clip on (frame threads: each decodes a picture of its own).
    static let softwareThreads = 2
    /// The most video read ahead for the sound: about a second of a phone's 1080p at 20 Mbit/s.
    static let readAheadBytes = 3 << 20

    /// Picks and opens the decoder; `preference` narrows the choice (`auto` tries hardware, then software).
    init(file: ClipFile, preference: VideoDecoding, threads: Int = ClipDecoder.softwareThreads) throws(ImageError) {
        self.file = file
        guard let parameters = file.stream?.pointee.codecpar else {
            throw ImageError(file: file.path, reason: .damaged(.clip, "no codec parameters"))
        }
        let codecName = file.header.codec
        var refusals: [String] = []
        var opened: (UnsafeMutablePointer<AVCodecContext>, String, Bool)?
        if preference == .auto || preference == .v4l2m2m {
            // The wrapper finds the kernel's decoder among /dev/video*; where there is none, opening it fails.
            if let wrapper = avcodec_find_decoder_by_name("\(codecName)_v4l2m2m") {
                switch ClipDecoder.open(wrapper, parameters: parameters, threads: 1) {
                case .success(let context): opened = (context, "\(codecName)_v4l2m2m (V4L2 hardware)", true)
                case .failure(let why): refusals.append("V4L2: \(why)")
                }
            } else {
                refusals.append("V4L2: FFmpeg has no \(codecName)_v4l2m2m")
            }
        }
        if opened == nil, preference == .auto || preference == .vaapi {
            switch ClipDecoder.openVAAPI(parameters: parameters) {
            case .success(let context): opened = (context, "\(codecName) (VA-API)", true)
            case .failure(let why): refusals.append("VA-API: \(why)")
            }
        }
        if opened == nil, preference == .auto || preference == .software {
            guard let software = avcodec_find_decoder(parameters.pointee.codec_id) else {
                throw ImageError(file: file.path, reason: .unsupportedVariant(.clip, "no decoder for \(codecName)"))
            }
            switch ClipDecoder.open(software, parameters: parameters, threads: threads) {
            case .success(let context): opened = (context, "\(codecName) (software)", false)
            case .failure(let why): refusals.append("software: \(why)")
            }
        }
        guard let opened else {
            throw ImageError(
                file: file.path,
                reason: .unsupportedVariant(
                    .clip, "no \(preference.rawValue) decoder for \(codecName) (\(refusals.joined(separator: "; ")))"))
        }
        (codec, name, isHardware) = opened
        packet = av_packet_alloc()
        frame = av_frame_alloc()
        transferred = av_frame_alloc()
        guard packet != nil, frame != nil, transferred != nil else {
            throw ImageError(file: file.path, reason: .decodeFailed("out of memory for the decoder's frames"))
        }
    }

    deinit {
        clearPending()
        av_frame_free(&transferred)
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&codec)
    }

    private static func open(
        _ decoder: UnsafePointer<AVCodec>, parameters: UnsafePointer<AVCodecParameters>, threads: Int
    ) -> Result<UnsafeMutablePointer<AVCodecContext>, DecoderRefusal> {
        guard let context = avcodec_alloc_context3(decoder) else { return .failure(DecoderRefusal("out of memory")) }
        var result = avcodec_parameters_to_context(context, parameters)
        if result >= 0 {
            context.pointee.thread_count = Int32(threads)
            result = avcodec_open2(context, decoder, nil)
        }
        guard result >= 0 else {
            var owned: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&owned)
            return .failure(DecoderRefusal(ClipFile.describe(result)))
        }
        return .success(context)
    }

    /// VA-API, where a render node answers for it (Intel and AMD graphics; libva comes with FFmpeg's libraries).
    private static func openVAAPI(parameters: UnsafePointer<AVCodecParameters>) -> Result<
        UnsafeMutablePointer<AVCodecContext>, DecoderRefusal
    > {
        guard access("/dev/dri/renderD128", R_OK | W_OK) == 0 else { return .failure(DecoderRefusal("no render node")) }
        guard let decoder = avcodec_find_decoder(parameters.pointee.codec_id),
            let context = avcodec_alloc_context3(decoder)
        else { return .failure(DecoderRefusal("no decoder")) }
        var result = avcodec_parameters_to_context(context, parameters)
        if result >= 0 {
            result = vitrine_av_use_device(context, AV_HWDEVICE_TYPE_VAAPI, "/dev/dri/renderD128", AV_PIX_FMT_VAAPI)
        }
        if result >= 0 { result = avcodec_open2(context, decoder, nil) }
        guard result >= 0 else {
            var owned: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&owned)
            return .failure(DecoderRefusal(ClipFile.describe(result)))
        }
        return .success(context)
    }

    /// The next picture in presentation order, nil at the end of the clip. Valid until the next call. A hardware
    /// picture comes back in memory the CPU can read.
    func next() throws(ImageError) -> UnsafeMutablePointer<AVFrame>? {
        guard let codec, let frame, let packet else { return nil }
        while true {
            av_frame_unref(frame)
            let received = avcodec_receive_frame(codec, frame)
            if received >= 0 { return try readable(frame) }
            if received == vitrine_av_eof() { return nil }
            guard received == vitrine_av_again() else {
                throw ImageError(file: file.path, reason: ClipFile.failure(received, doing: "decode", path: file.path))
            }
            if drained { return nil }
            if let next = try nextVideoPacket(into: packet) {
                let sent = avcodec_send_packet(codec, next)
                av_packet_unref(next)
                // A damaged packet is skipped (the decoder conceals what it can); anything else ends the clip.
                if sent < 0, sent != vitrine_av_error(EINVAL), sent != vitrine_av_again(),
                    sent != vitrine_av_invalid_data()
                {
                    throw ImageError(file: file.path, reason: ClipFile.failure(sent, doing: "decode", path: file.path))
                }
            } else {
                // The end of the file: the decoder hands out the pictures it still holds.
                drained = true
                _ = avcodec_send_packet(codec, nil)
            }
        }
    }

    /// Whether pictures no other picture refers to (most B-pictures) are passed over undecoded, so that a board
    /// that cannot decode every picture in time still keeps the clip's pace. The packets already handed to a
    /// frame-threaded decoder keep the setting they went in with.
    func skipUnreferenced(_ skip: Bool) {
        guard let codec, skip != skipping else { return }
        skipping = skip
        codec.pointee.skip_frame = skip ? AVDISCARD_NONREF : AVDISCARD_DEFAULT
    }
    private(set) var skipping = false
    /// Packets a frame-threaded decoder may hold before the picture it hands out (its threads, a picture or two
    /// of reordering): how long a change of `skipping` takes to show.
    static let packetsInFlight = 4

    /// Back to the first picture (a clip that loops): the decoder forgets what it held.
    func rewind() throws(ImageError) {
        try file.rewind()
        if let codec { avcodec_flush_buffers(codec) }
        clearPending()
        drained = false
        fileEnded = false
    }

    /// Seconds of clip time for a picture's timestamp.
    func seconds(_ stamp: Int64) -> Double { file.seconds(stamp) }

    /// Whether a packet may be read ahead for the sound: the file has more and the video read ahead is in bounds.
    var canReadAhead: Bool { !fileEnded && pendingBytes < Self.readAheadBytes }

    /// Reads one packet ahead: the sound's is decoded into it, a picture's waits in `pending`.
    func readAhead() throws(ImageError) {
        guard let packet, canReadAhead else { return }
        guard try file.readPacket(into: packet) else {
            fileEnded = true
            return
        }
        if packet.pointee.stream_index == file.videoIndex, let held = av_packet_alloc() {
            av_packet_move_ref(held, packet)
            pending.append(held)
            pendingBytes += Int(held.pointee.size)
        } else if let otherPackets, packet.pointee.stream_index == otherPackets.index {
            otherPackets.take(packet)
        } else {
            av_packet_unref(packet)
        }
    }

    /// The next video packet: one read ahead, else the file's next (the sound's on the way are decoded into it,
    /// others passed over); nil at the end.
    private func nextVideoPacket(into packet: UnsafeMutablePointer<AVPacket>) throws(ImageError)
        -> UnsafeMutablePointer<AVPacket>?
    {
        if !pending.isEmpty {
            let held = pending.removeFirst()
            pendingBytes -= Int(held.pointee.size)
            av_packet_move_ref(packet, held)
            var freed: UnsafeMutablePointer<AVPacket>? = held
            av_packet_free(&freed)
            return packet
        }
        while !fileEnded {
            guard try file.readPacket(into: packet) else {
                fileEnded = true
                return nil
            }
            if packet.pointee.stream_index == file.videoIndex { return packet }
            if let otherPackets, packet.pointee.stream_index == otherPackets.index {
                otherPackets.take(packet)
            } else {
                av_packet_unref(packet)
            }
        }
        return nil
    }

    private func clearPending() {
        for held in pending {
            var freed: UnsafeMutablePointer<AVPacket>? = held
            av_packet_free(&freed)
        }
        pending = []
        pendingBytes = 0
    }

    private func readable(_ frame: UnsafeMutablePointer<AVFrame>) throws(ImageError) -> UnsafeMutablePointer<AVFrame> {
        guard frame.pointee.hw_frames_ctx != nil, let transferred else { return frame }
        av_frame_unref(transferred)
        let result = av_hwframe_transfer_data(transferred, frame, 0)
        guard result >= 0 else {
            throw ImageError(
                file: file.path, reason: ClipFile.failure(result, doing: "copy a frame from", path: file.path))
        }
        transferred.pointee.pts = frame.pointee.pts
        transferred.pointee.best_effort_timestamp = frame.pointee.best_effort_timestamp
        transferred.pointee.colorspace = frame.pointee.colorspace
        transferred.pointee.color_range = frame.pointee.color_range
        return transferred
    }
}

struct DecoderRefusal: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

extension DecoderRefusal: CustomStringConvertible {
    var description: String { reason }
}
