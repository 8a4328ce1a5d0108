import CFFmpeg
import Testing
import VitrineCore
import VitrinePlatform

@testable import VitrineImage

/// A clip's sound decoded (`ClipAudioDecoder` into `ClipSound`'s queue) from a fixture made by make_clip.py: a
/// mono AAC track of a 440 Hz sine whose first tenth of each second is 1000 Hz instead; and a device that is missing.
@Suite struct ClipSoundTests {
    static let fixture = ClipImageTests.fixtures + "/counter_sound.mp4"
    let budget = MemoryBudget(limit: 256 << 20)

    /// Every sound packet of the fixture decoded into a queue (no writer: nothing takes from it).
    func decoded(limit: Double? = nil) throws -> [(time: Double, samples: ArraySlice<Int16>)] {
        let file = try ClipFile(path: Self.fixture)
        let decoder = try ClipAudioDecoder(file: file, rate: 48_000)
        let sound = ClipSound(monitor: Monitor(), limit: limit, anchor: nil)
        var packet = av_packet_alloc()
        defer { av_packet_free(&packet) }
        let reading = try #require(packet)
        while try file.readPacket(into: reading) {
            if decoder.owns(reading) { decoder.decode(reading, into: sound) } else { av_packet_unref(reading) }
        }
        return sound.queued
    }

    /// Zero crossings of the left channel between two clip times, as a frequency.
    static func frequency(_ runs: [(time: Double, samples: ArraySlice<Int16>)], from: Double, to: Double) -> Double {
        var left: [Int16] = []
        for run in runs {
            for (n, sample) in run.samples.enumerated() where n % 2 == 0 {
                let time = run.time + Double(n / 2) / 48_000
                if time >= from, time < to { left.append(sample) }
            }
        }
        let crossings = zip(left, left.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        return Double(crossings) / 2 / (to - from)
    }

    @Test func theSoundIsDecodedToStereoAt48kHzWithItsClipTimes() throws {
        let runs = try decoded()
        let first = try #require(runs.first)
        #expect(abs(first.time) < 0.03)
        let frames = runs.reduce(0) { $0 + $1.samples.count / 2 }
        // One second of sound, give or take the encoder's last frame.
        #expect(abs(frames - 48_000) < 2_048)
        // Each run follows the last without a gap or an overlap.
        for (a, b) in zip(runs, runs.dropFirst()) {
            #expect(abs(a.time + Double(a.samples.count / 2) / 48_000 - b.time) < 0.001)
        }
        // The mono track is on both channels.
        let samples = Array(runs[runs.count / 2].samples)
        #expect(stride(from: 0, to: samples.count, by: 2).allSatisfy { samples[$0] == samples[$0 + 1] })
        // The tone, and the beep in the first tenth of the second.
        #expect(abs(Self.frequency(runs, from: 0.3, to: 0.8) - 440) < 440 * 0.03)
        #expect(abs(Self.frequency(runs, from: 0.02, to: 0.09) - 1000) < 1000 * 0.05)
    }

    @Test func soundPastMaxSecondsIsNotQueued() throws {
        let runs = try decoded(limit: 0.5)
        let last = try #require(runs.last)
        #expect(last.time + Double(last.samples.count / 2) / 48_000 <= 0.5 + 0.001)
        #expect(runs.reduce(0) { $0 + $1.samples.count / 2 } > 20_000)
    }

    @Test func aMissingSoundDeviceLeavesTheClipPlayingSilentWithOneLineNamingIt() throws {
        let options = RenderOptions(canvas: Size(width: 64, height: 36))
        let (poster, _) = try FrameRenderer(budget: budget).render(Self.fixture, options: options)
        let wakeup = try Wakeup()
        let stream = ClipStream(
            path: Self.fixture, poster: poster,
            settings: ClipStream.Settings(
                options: options, decoding: .software, maxSeconds: nil, loop: false, sound: "vitrine-no-such-device"),
            budget: budget, wakeup: wakeup)
        var pictures = 0
        var failures: [String] = []
        var ended = false
        ClipImageTests.read(stream, wakeup) { output in
            switch output {
            case .picture(let picture):
                pictures += 1
                stream.recycle(picture.frame)
            case .soundFailed(let why): failures.append(why)
            case .ended: ended = true
            case .started, .soundPlays, .failed: break
            }
            // The sound's thread opens the device beside the pictures' and may say so after the last of them.
            return ended && !failures.isEmpty
        }
        #expect(ended)
        #expect(pictures == 30)
        #expect(failures.count == 1)
        #expect(failures.first?.contains("the sound device vitrine-no-such-device") == true)
    }
}
