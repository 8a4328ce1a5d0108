import VitrineCore
import VitrinePlatform

/// A clip's sound: the decoding thread feeds it samples (interleaved 16-bit stereo, each run with its clip time),
/// and a thread of its own writes them to the ALSA device in step with the pictures (`AudioSync`: the pictures are
/// the clock). A held clip (no anchor: paused, the screen off, the VT away) is mute at once, its device stopped.
///
/// The queue is kept under the stream's monitor, which the decoding thread waits on, so the writer taking samples
/// wakes it to read on (a file's sound and pictures are interleaved: the sound can run short while every picture
/// frame is taken). It holds at most `ahead` seconds.
final class ClipSound: @unchecked Sendable {
    // @unchecked: every var is used under `monitor`.
    private let monitor: Monitor
    private struct Run {
        var time: Double
        var samples: [Int16]
        var used = 0
    }
    private var runs: [Run] = []
    private var buffered = 0
    private var anchor: Double?
    private var stopped = false
    private var failed = false
    /// Samples past this clip time are not played (`video.maxSeconds`).
    private let limit: Double?
    let rate: Int
    /// How much sound is read ahead of what is written.
    static let ahead = 0.5
    /// The device's buffer: short, so a pause is silent at once and the sync has little to look through.
    static let latency = 0.1
    /// What the queue and the pictures read ahead for it cost at most (charged with the clip).
    static let bytes = 4 << 20 + Int(ahead * 48_000 * 4)

    /// Made under `monitor` (the stream's), with the clock as it stands.
    init(monitor: Monitor, rate: Int = 48_000, limit: Double?, anchor: Double?) {
        self.monitor = monitor
        self.rate = rate
        self.limit = limit
        self.anchor = anchor
    }

    /// Whether the queue is short (under the monitor): the decoding thread reads on for it.
    var hungry: Bool { !stopped && !failed && buffered < Int(Self.ahead * Double(rate)) }

    /// A run of samples starting at clip time `time` (the decoding thread).
    func feed(time: Double, samples: [Int16]) {
        guard !samples.isEmpty else { return }
        var samples = samples
        if let limit {
            guard time < limit else { return }
            let room = Int((limit - time) * Double(rate)) * 2
            if samples.count > room { samples.removeLast(samples.count - room) }
        }
        monitor.locked {
            guard !stopped, !failed else { return }
            runs.append(Run(time: time, samples: samples))
            buffered += samples.count / 2
            monitor.broadcast()
        }
    }

    /// What is queued and not written yet: each run's clip time and samples (a snapshot).
    var queued: [(time: Double, samples: ArraySlice<Int16>)] {
        monitor.locked { runs.map { ($0.time + Double($0.used / 2) / Double(rate), $0.samples[$0.used...]) } }
    }

    /// Where clip time 0 is on the monotonic clock; nil holds the sound (mute).
    func setClock(anchor: Double?) {
        monitor.locked {
            self.anchor = anchor
            monitor.broadcast()
        }
    }

    /// Ends the sound: the writer stops the device at once and ends; what is queued is forgotten.
    func stop() {
        monitor.locked {
            stopped = true
            runs = []
            buffered = 0
            monitor.broadcast()
        }
    }

    /// Opens `device` and writes on a thread of its own until stopped; `report` says which device plays the sound,
    /// or why there is none (the clip then plays silent).
    func start(device: String, report: @escaping @Sendable (Result<String, SoundError>) -> Void) {
        JoinableThread.detach { [self] in
            let output: SoundDevice
            do throws(SoundError) {
                output = try SoundDevice(name: device, rate: rate, latency: Self.latency)
            } catch {
                monitor.locked {
                    failed = true
                    runs = []
                    buffered = 0
                    monitor.broadcast()
                }
                report(.failure(error))
                return
            }
            report(.success(device))
            do throws(SoundError) {
                try write(to: output)
            } catch {
                monitor.locked {
                    failed = true
                    monitor.broadcast()
                }
                report(.failure(error))
            }
        }
    }

    private enum Work {
        case end, halt, silence(Int), samples([Int16])
    }

    private func write(to output: SoundDevice) throws(SoundError) {
        let sync = AudioSync(rate: rate, chunk: rate / 50)
        let silence = [Int16](repeating: 0, count: sync.chunk * 2)
        var sounding = false
        while true {
            let work = next(sync: sync, output: output, sounding: sounding)
            switch work {
            case .end:
                output.halt()
                return
            case .halt:
                output.halt()
                sounding = false
            case .silence(let frames):
                _ = try silence.withUnsafeBufferPointer { buffer throws(SoundError) in
                    guard let base = buffer.baseAddress else { return 0 }
                    return try output.write(base, frames: min(frames, sync.chunk))
                }
                sounding = true
            case .samples(let block):
                var done = 0
                while done < block.count / 2 {
                    let wrote = try block.withUnsafeBufferPointer { buffer throws(SoundError) in
                        guard let base = buffer.baseAddress else { return 0 }
                        return try output.write(base + done * 2, frames: block.count / 2 - done)
                    }
                    // An underrun recovered: the rest goes to the next round's check, not blindly after it.
                    if wrote == 0 { break }
                    done += wrote
                }
                sounding = true
            }
        }
    }

    /// What the writer does next, decided under the monitor.
    private func next(sync: AudioSync, output: SoundDevice, sounding: Bool) -> Work {
        monitor.locked {
            while true {
                if stopped { return .end }
                guard let anchor else {
                    if sounding { return .halt }
                    monitor.wait()
                    continue
                }
                guard let first = runs.first else {
                    monitor.wait(seconds: 0.05)
                    continue
                }
                let time = first.time + Double(first.used / 2) / Double(rate)
                let step = sync.step(
                    anchor: anchor, sampleTime: time, now: MonotonicClock.seconds(),
                    queued: sounding ? output.queued : 0)
                switch step {
                case .hold:
                    return .halt
                case .skip(let frames):
                    take(frames)
                    continue
                case .silence(let frames):
                    return .silence(frames)
                case .write(let frames):
                    return .samples(take(frames))
                }
            }
        }
    }

    /// Takes up to `frames` from the front of the queue (under the monitor).
    @discardableResult
    private func take(_ frames: Int) -> [Int16] {
        var block: [Int16] = []
        var wanted = frames * 2
        while wanted > 0, !runs.isEmpty {
            let available = runs[0].samples.count - runs[0].used
            let count = min(available, wanted)
            block.append(contentsOf: runs[0].samples[runs[0].used..<runs[0].used + count])
            runs[0].used += count
            wanted -= count
            if runs[0].used >= runs[0].samples.count { runs.removeFirst() }
        }
        buffered -= block.count / 2
        monitor.broadcast()
        return block
    }
}
