import CFFmpeg
import VitrineCore
import VitrinePlatform

/// A clip being played: a thread of its own demuxes, decodes and scales each picture into a frame of the scanout
/// size, and hands the frames to the player's thread through `wakeup`. The frames come from a small pool (three):
/// a frame goes back to the pool once painted (`recycle`), so a clip costs three frames and the decoder's pictures
/// whatever its length, all charged to the budget before the first picture. The decoder stops when no frame is
/// free, so a paused clip holds its place without work.
///
/// `stop()` never waits: the thread is told to end, and a read under way is interrupted (libavformat's interrupt
/// callback); a read stuck in the kernel on a share that stalls ends when the share answers, and the thread then
/// ends by itself. The player's thread is never held up by it.
public final class ClipStream: Sendable {
    public struct Settings: Sendable {
        public var options: RenderOptions
        public var decoding: VideoDecoding
        /// Clip time after which the clip ends (`video.maxSeconds`).
        public var maxSeconds: Double?
        public var loop: Bool
        public var poolFrames: Int
        /// The ALSA device the clip's sound plays on; nil: silent (`video.audio` off).
        public var sound: String?
        /// Frames in NV12 for a plane that converts colours itself, where the clip's box allows (`ClipLayout`).
        public var planar: Bool

        public init(
            options: RenderOptions, decoding: VideoDecoding, maxSeconds: Double?, loop: Bool, poolFrames: Int = 3,
            sound: String? = nil, planar: Bool = false
        ) {
            self.options = options
            self.decoding = decoding
            self.maxSeconds = maxSeconds
            self.loop = loop
            self.poolFrames = poolFrames
            self.sound = sound
            self.planar = planar
        }
    }

    /// A picture ready to show: its frame (the pool's) and its time in the clip (seconds; a loop's later passes
    /// count on from the first).
    public struct Picture: Sendable {
        public let frame: Frame
        public let time: Double
        public let index: Int
    }

    public enum Output: Sendable {
        /// The clip is open and its decoder chosen; `planar` when its frames are NV12.
        case started(decoder: String, hardware: Bool, header: ClipHeader, planar: Bool)
        case picture(Picture)
        /// The sound plays: its codec and the device ("aac 44100 Hz on default").
        case soundPlays(String)
        /// The clip plays silent: why (the device missing or busy, a sound the decoder does not take).
        case soundFailed(String)
        /// The last picture has been handed out (the clip's end, or `maxSeconds`).
        case ended
        case failed(ImageError)
    }

    private final class Shared: @unchecked Sendable {
        // @unchecked: every field is used under `monitor`.
        let monitor = Monitor()
        var outputs: [Output] = []
        var free: [Frame] = []
        var stopped = false
        var looping: Bool
        /// The monotonic time of clip time 0 while the clip plays (nil before and while paused).
        var anchor: Double?
        /// When the last picture was handed over (monotonic seconds).
        var lastDelivery = 0.0
        /// Pictures passed over because they were already late: decoded and not scaled, or (`undecoded`, counted
        /// in both) not even decoded while the decoder was far behind.
        var skipped = 0
        var undecoded = 0
        /// The clip's sound, once its decoder is open; it keeps its queue under `monitor` too.
        var sound: ClipSound?
        init(looping: Bool) { self.looping = looping }
    }

    private let shared: Shared
    private let interrupt: Locked<ClipFile?>
    public let path: String

    /// Starts the thread: `poster` is the clip's first picture as the slide showed it (its margins, a blurred fill
    /// or the background, are copied into every frame once, so only the picture's box is written per picture).
    public init(path: String, poster: Frame, settings: Settings, budget: MemoryBudget, wakeup: Wakeup) {
        self.path = path
        let shared = Shared(looping: settings.loop)
        self.shared = shared
        let interrupt = Locked<ClipFile?>(nil)
        self.interrupt = interrupt
        JoinableThread.detach {
            let result = ClipStream.run(
                path: path, poster: poster, settings: settings, budget: budget, shared: shared, interrupt: interrupt,
                wakeup: wakeup)
            shared.monitor.locked {
                if case .failure(let error) = result, !shared.stopped {
                    shared.outputs.append(.failed(error))
                } else if !shared.stopped {
                    shared.outputs.append(.ended)
                }
                shared.free = []
            }
            interrupt.withLock { $0 = nil }
            wakeup.signal()
        }
    }

    /// What the thread has handed over since the last call (the player's thread).
    public func take() -> [Output] {
        shared.monitor.locked {
            defer { shared.outputs = [] }
            return shared.outputs
        }
    }

    /// A picture's frame is painted: the decoder may write into it again.
    public func recycle(_ frame: Frame) {
        shared.monitor.locked {
            guard !shared.stopped else { return }
            shared.free.append(frame)
            shared.monitor.broadcast()
        }
    }

    /// Where clip time 0 is on the monotonic clock while the clip plays; nil while it is held. The thread passes
    /// over (unscaled) a picture that is already late when decoded, so a board that decodes slower than the clip's
    /// rate keeps its pace with fewer pictures rather than playing in slow motion.
    public func setClock(anchor: Double?) {
        let sound = shared.monitor.locked { () -> ClipSound? in
            shared.anchor = anchor
            return shared.sound
        }
        sound?.setClock(anchor: anchor)
    }

    /// Pictures the thread passed over for being late.
    public var skippedPictures: Int { shared.monitor.locked { shared.skipped } }
    /// Of those, the ones never decoded (nothing referred to them and the decoder was far behind).
    var undecodedPictures: Int { shared.monitor.locked { shared.undecoded } }

    /// Play to the end and no further.
    public func stopLooping() {
        shared.monitor.locked { shared.looping = false }
    }

    /// Ends the thread without waiting for it; nothing more is handed over.
    public func stop() {
        let sound = shared.monitor.locked { () -> ClipSound? in
            shared.stopped = true
            shared.outputs = []
            shared.free = []
            shared.monitor.broadcast()
            return shared.sound
        }
        sound?.stop()
        interrupt.withLock { $0?.interrupt() }
    }

    private static func run(
        path: String, poster: Frame, settings: Settings, budget: MemoryBudget, shared: Shared,
        interrupt: Locked<ClipFile?>, wakeup: Wakeup
    ) -> Result<Void, ImageError> {
        do throws(ImageError) {
            let file = try ClipFile(path: path)
            interrupt.withLock { $0 = file }
            if shared.monitor.locked({ shared.stopped }) { return .success(()) }
            let layout = try ClipLayout(header: file.header, options: settings.options, path: path)
            guard poster.size == layout.scanout else {
                throw ImageError(file: path, reason: .decodeFailed("the screen changed size"))
            }
            let soundBytes = settings.sound != nil && file.audioIndex != nil ? ClipSound.bytes : 0
            let charge = try ClipStream.charge(
                budget, file.header.decoderWorkspaceBytes + layout.scratchBytes + soundBytes,
                for: "playing a \(file.header.kind) clip (decoder and scaling)", path: path)
            try ClipStream.decode(
                file: file, layout: layout, poster: poster, settings: settings, budget: budget, shared: shared,
                wakeup: wakeup)
            // The decoder and the scaling buffer are gone: the charge is returned here, not before.
            _ = charge.bytes
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// The decoding threads' nice value: below the player's thread and the sound's.
    static let niceness: Int32 = 5

    /// How late a decoded picture may be and still be scaled and shown (a picture's time at 30 fps).
    static let lateness = 1.0 / 30
    /// The longest the screen waits for a picture while late ones are passed over.
    static let longestWait = 0.25
    /// How far behind its time a decoded picture must be before the decoder stops decoding the pictures nothing
    /// refers to: far past what a hiccup of a board that keeps up costs (the pool of frames decoded ahead absorbs
    /// those), so a board that keeps up never loses a picture to it.
    static let farBehind = 0.25

    private static func charge(_ budget: MemoryBudget, _ bytes: Int, for purpose: String, path: String)
        throws(ImageError) -> MemoryBudget.Charge
    {
        do {
            return try budget.charge(bytes, for: purpose)
        } catch {
            throw ImageError(file: path, reason: .overBudget(error))
        }
    }

    /// Decodes picture after picture into the pool's free frames until the clip ends or the stream is stopped.
    private static func decode(
        file: ClipFile, layout: ClipLayout, poster: Frame, settings: Settings, budget: MemoryBudget, shared: Shared,
        wakeup: Wakeup
    ) throws(ImageError) {
        let path = file.path
        // The sound's writer first, at the usual priority; then this thread and the decoder's own threads (which
        // inherit it) below the player's: a picture decoded ahead can wait a moment, a flip due at a vblank and
        // the sound device cannot. On two busy cores the player's thread otherwise woke 20 ms late for its flips.
        let playing = settings.sound.flatMap {
            startSound(file: file, device: $0, settings: settings, shared: shared, wakeup: wakeup)
        }
        JoinableThread.lowerPriority(niceness: Self.niceness)
        let decoder = try ClipDecoder(file: file, preference: settings.decoding)
        if let playing {
            decoder.otherPackets = (
                playing.audio.streamIndex, { packet in playing.audio.decode(packet, into: playing.sound) }
            )
        }
        let planar = settings.planar && layout.planarOrigin != nil
        var frames: [Frame] = []
        for _ in 0..<max(2, settings.poolFrames) {
            do {
                let frame = try Frame(
                    size: layout.scanout, budget: budget, purpose: "a \(layout.scanout) clip frame",
                    layout: planar ? .nv12 : .xrgb)
                // NV12 frames take the poster's margins with the first picture, whose matrix and range they need.
                if !planar { frame.pixels.update(from: poster.pixels, count: poster.size.pixelCount) }
                frames.append(frame)
            } catch {
                throw ImageError(file: path, reason: .overBudget(error))
            }
        }
        shared.monitor.locked {
            shared.free = frames
            shared.outputs.append(
                .started(decoder: decoder.name, hardware: decoder.isHardware, header: file.header, planar: planar))
        }
        var primed = !planar
        frames = []
        wakeup.signal()
        let sound = playing?.sound
        let audio = playing?.audio
        let scaler = ClipScaler()
        let scratch =
            layout.scratchBytes > 0
            ? UnsafeMutableRawPointer.allocate(
                byteCount: layout.scratchBytes, alignment: 64) : nil
        defer { scratch?.deallocate() }
        var index = 0
        var offset = 0.0
        var last = 0.0
        var previous: Double?
        var sinceSkipping = Int.max / 2
        let step = file.header.frameRate > 0 ? 1 / file.header.frameRate : 1.0 / 30
        while true {
            var frame: Frame?
            var readAhead = false
            let stopped = shared.monitor.locked { () -> Bool in
                // No frame free: the sound may still want feeding (read on ahead of the pictures).
                while !shared.stopped && shared.free.isEmpty && !(sound?.hungry == true && decoder.canReadAhead) {
                    shared.monitor.wait()
                }
                if shared.stopped { return true }
                // The sound first: its samples are due when their pictures are and cost little to decode, so a
                // decoder behind on its pictures (a busy board) must not let the sound run dry; it reads on for it.
                if sound?.hungry == true && decoder.canReadAhead {
                    readAhead = true
                } else {
                    frame = shared.free.popLast()
                }
                return false
            }
            if stopped { return }
            if readAhead {
                try decoder.readAhead()
                continue
            }
            guard let frame else { return }
            guard let picture = try decoder.next() else {
                guard shared.monitor.locked({ shared.looping }), index > 0 else {
                    shared.monitor.locked { shared.free.append(frame) }
                    return
                }
                // The next pass follows the last picture by one picture's time.
                offset = last + step
                try decoder.rewind()
                audio?.rewind(offset: offset)
                shared.monitor.locked { shared.free.append(frame) }
                continue
            }
            var time = offset
            let stamp = vitrine_av_frame_time(picture)
            if stamp != vitrine_av_nopts() { time += file.seconds(stamp) } else { time = last + step }
            if let limit = settings.maxSeconds, time >= limit {
                shared.monitor.locked { shared.free.append(frame) }
                return
            }
            // Pictures the decoder passed over undecoded (below) count as passed over, as the unscaled ones do; a
            // gap elsewhere is the clip's own (a phone's variable frame rate).
            if let previous, decoder.skipping || sinceSkipping < ClipDecoder.packetsInFlight {
                let missing = Int(((time - previous) / step).rounded()) - 1
                if missing > 0 {
                    shared.monitor.locked {
                        shared.skipped += missing
                        shared.undecoded += missing
                    }
                }
            }
            sinceSkipping = decoder.skipping ? 0 : sinceSkipping + 1
            previous = time
            last = time
            let (late, behind) = shared.monitor.locked { () -> (Bool, Double?) in
                guard let anchor = shared.anchor else { return (false, nil) }
                let now = MonotonicClock.seconds()
                let behind = now - (anchor + time)
                // Scaling is most of a picture's cost: a picture already past its time is not scaled, unless the
                // screen has waited long for one (a board far too slow still shows a few pictures a second).
                guard behind > Self.lateness, now - shared.lastDelivery < Self.longestWait else {
                    return (false, behind)
                }
                shared.skipped += 1
                shared.free.append(frame)
                return (true, behind)
            }
            // Decoding alone slower than the clip: pictures nothing refers to are not even decoded until the
            // decoder is back ahead of the screen, so the clip keeps its pace instead of falling further behind.
            if let behind, behind > Self.farBehind {
                decoder.skipUnreferenced(true)
            } else if let behind, behind < 0 {
                decoder.skipUnreferenced(false)
            }
            if late { continue }
            if !primed {
                try prime(frame, from: poster, encoding: ClipScaler.encoding(of: picture), shared: shared, path: path)
                primed = true
            }
            let drawn =
                planar
                ? layout.drawPlanar(picture, into: frame, scaler: scaler)
                : layout.draw(picture, into: frame, scaler: scaler, scratch: scratch)
            guard drawn else {
                throw ImageError(file: path, reason: .decodeFailed("cannot scale picture \(index + 1)"))
            }
            shared.monitor.locked {
                if !shared.stopped { shared.outputs.append(.picture(Picture(frame: frame, time: time, index: index))) }
                shared.lastDelivery = MonotonicClock.seconds()
            }
            index += 1
            wakeup.signal()
        }
    }

    /// Gives every NV12 frame of the pool the poster's margins in the clip's matrix and range: `frame` (taken) and
    /// the free ones, none of which has been handed out yet.
    private static func prime(
        _ frame: Frame, from poster: Frame, encoding: YCbCrEncoding, shared: Shared, path: String
    ) throws(ImageError) {
        frame.encoding = encoding
        guard PlanarFrames.fill(frame, from: poster, encoding: encoding) else {
            throw ImageError(file: path, reason: .decodeFailed("cannot turn the poster into NV12"))
        }
        shared.monitor.locked {
            for other in shared.free {
                other.encoding = encoding
                UnsafeMutableRawPointer(other.pixels).copyMemory(from: frame.pixels, byteCount: frame.byteCount)
            }
        }
    }

    /// Opens the clip's sound (a clip with none plays as it is): its decoder on this thread, its writer on one of
    /// its own. What plays, or why nothing does, is handed over like a picture.
    private static func startSound(
        file: ClipFile, device: String, settings: Settings, shared: Shared, wakeup: Wakeup
    ) -> (sound: ClipSound, audio: ClipAudioDecoder)? {
        guard file.audioIndex != nil else { return nil }
        let report: @Sendable (ClipStream.Output) -> Void = { output in
            shared.monitor.locked { if !shared.stopped { shared.outputs.append(output) } }
            wakeup.signal()
        }
        let audio: ClipAudioDecoder
        do {
            audio = try ClipAudioDecoder(file: file, rate: 48_000)
        } catch {
            report(.soundFailed("\(error)"))
            return nil
        }
        let made = shared.monitor.locked { () -> ClipSound? in
            guard !shared.stopped else { return nil }
            let made = ClipSound(monitor: shared.monitor, limit: settings.maxSeconds, anchor: shared.anchor)
            shared.sound = made
            return made
        }
        guard let sound = made else { return nil }
        let codec = audio.name
        sound.start(device: device) { result in
            switch result {
            case .success(let device): report(.soundPlays("\(codec) on \(device)"))
            case .failure(let error): report(.soundFailed("\(error)"))
            }
        }
        return (sound, audio)
    }
}
