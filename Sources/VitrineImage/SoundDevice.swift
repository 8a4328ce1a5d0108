import CALSA
import VitrinePlatform

/// An ALSA playback device taking interleaved signed 16-bit stereo. One thread uses it (a clip's sound writer);
/// it is closed once, when released.
final class SoundDevice {
    private var pcm: OpaquePointer?
    let name: String
    let rate: Int

    /// Opens `name` (`default`, `hdmi:CARD=vc4hdmi0,DEV=0`, `plughw:1,0`) for `rate` Hz with about `latency`
    /// seconds of buffer. A device another program holds is refused at once rather than waited for.
    init(name: String, rate: Int, latency: Double) throws(SoundError) {
        self.name = name
        self.rate = rate
        do {
            try LazyLibrary.asound.load()
        } catch {
            throw SoundError(device: name, operation: "load ALSA", code: -ELIBACC, detail: "\(error)")
        }
        _ = SoundDevice.quietLibrary
        var opened: OpaquePointer?
        var result = snd_pcm_open(&opened, name, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        guard result >= 0, let opened else { throw SoundError(device: name, operation: "open", code: result) }
        pcm = opened
        result = snd_pcm_nonblock(opened, 0)
        if result >= 0 {
            // Soft resampling on: a `plug` device converts the rate where the card does not take it.
            result = snd_pcm_set_params(
                opened, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 2, UInt32(rate), 1,
                UInt32(latency * 1_000_000))
        }
        guard result >= 0 else {
            snd_pcm_close(opened)
            pcm = nil
            throw SoundError(device: name, operation: "set up (S16 stereo \(rate) Hz)", code: result)
        }
    }

    deinit {
        if let pcm {
            snd_pcm_drop(pcm)
            snd_pcm_close(pcm)
        }
    }

    /// Writes up to `frames` stereo frames, waiting for room: how many were taken. An underrun (the sound ran
    /// dry) is recovered from and counts as nothing written; anything else is an error.
    func write(_ samples: UnsafePointer<Int16>, frames: Int) throws(SoundError) -> Int {
        guard let pcm, frames > 0 else { return 0 }
        let written = snd_pcm_writei(pcm, samples, snd_pcm_uframes_t(frames))
        if written >= 0 { return Int(written) }
        let recovered = snd_pcm_recover(pcm, Int32(written), 1)
        guard recovered >= 0 else { throw SoundError(device: name, operation: "write to", code: Int32(written)) }
        return 0
    }

    /// Seconds of sound written and not heard yet (0 when the device is stopped or has run dry).
    var queued: Double {
        guard let pcm else { return 0 }
        var delay: snd_pcm_sframes_t = 0
        guard snd_pcm_delay(pcm, &delay) >= 0 else { return 0 }
        return Double(max(0, delay)) / Double(rate)
    }

    /// Stops at once, dropping what is queued (a pause is silent now, not in a tenth of a second), ready for more.
    func halt() {
        guard let pcm else { return }
        snd_pcm_drop(pcm)
        snd_pcm_prepare(pcm)
    }

    private static let quietLibrary: Void = vitrine_alsa_silence_errors()
}

/// A sound device that failed: which, doing what, and ALSA's error (a negative errno).
public struct SoundError: Error, Equatable, Sendable, CustomStringConvertible {
    public let device: String
    public let operation: String
    public let code: Int32
    public let detail: String?

    init(device: String, operation: String, code: Int32, detail: String? = nil) {
        self.device = device
        self.operation = operation
        self.code = code
        self.detail = detail
    }

    public var errno: Int32 { -code }

    public var description: String {
        let why = detail ?? (LazyLibrary.asound.isLoaded ? String(cString: snd_strerror(code)) : "error \(code)")
        return "cannot \(operation) the sound device \(device): \(why)"
    }
}
