/// Keeps a clip's sound with its pictures. The pictures are the clock: clip time `t` is on the glass at
/// `anchor + t` (the pacer's vblank-grid anchor), so a sample of time `t` must be heard then too. The writer asks
/// before each write; the sound device's queue (`queued`, what it holds and has not played yet) says when the next
/// sample written would be heard. Within `tolerance` the samples are written as they are; outside it the writer
/// passes over samples (the sound is behind: after a stall, or the sound card's clock running slow) or writes
/// silence (ahead: the start, or after a resume). A held clip (no anchor) is mute: the device is stopped and its
/// queue dropped, not drained.
public struct AudioSync: Sendable, Equatable {
    public enum Step: Sendable, Equatable {
        /// In step: write up to this many of the next samples.
        case write(frames: Int)
        /// Behind: pass over this many of the next samples.
        case skip(frames: Int)
        /// Ahead: write this much silence before the next samples.
        case silence(frames: Int)
        /// The clip is held: stop the device at once.
        case hold
    }

    /// Sample frames a second.
    public let rate: Int
    /// How far the sound may drift from the pictures before it is put right. Half the 40 ms lip-sync tolerance
    /// (EBU R37 allows 40 ms of sound early), so the measured offset stays inside it with a vblank to spare.
    public let tolerance: Double
    /// The most written in one go (one device period): the writer comes back this often to check.
    public let chunk: Int

    public init(rate: Int, tolerance: Double = 0.015, chunk: Int = 1024) {
        self.rate = max(1, rate)
        self.tolerance = tolerance
        self.chunk = max(1, chunk)
    }

    /// What to do next: `anchor` is the monotonic time of clip time 0 (nil while held), `sampleTime` the clip time
    /// of the next sample not yet written, `queued` the seconds of sound the device holds unplayed.
    public func step(anchor: Double?, sampleTime: Double, now: Double, queued: Double) -> Step {
        guard let anchor else { return .hold }
        let heard = now + max(0, queued)
        let due = anchor + sampleTime
        let error = heard - due
        if error > tolerance {
            return .skip(frames: max(1, Int((error * Double(rate)).rounded())))
        }
        if error < -tolerance {
            return .silence(frames: min(chunk, max(1, Int((-error * Double(rate)).rounded()))))
        }
        return .write(frames: chunk)
    }
}
