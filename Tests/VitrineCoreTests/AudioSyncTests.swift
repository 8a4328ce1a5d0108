import Testing
import VitrineCore

/// A clip's sound against its pictures' clock (`AudioSync`), with a manual clock: the pictures' anchor is clip
/// time 0 on the glass, and the sound device's queue says when the next sample written is heard.
@Suite struct AudioSyncTests {
    let sync = AudioSync(rate: 48_000, tolerance: 0.015, chunk: 960)

    @Test func inStepTheSamplesAreWrittenAChunkAtATime() {
        // Clip time 1.0 is due at 101.0; with 0.1 s queued at 100.9 the next sample is heard at 101.0.
        #expect(sync.step(anchor: 100, sampleTime: 1.0, now: 100.9, queued: 0.1) == .write(frames: 960))
        // 10 ms off either way is inside the tolerance.
        #expect(sync.step(anchor: 100, sampleTime: 1.0, now: 100.91, queued: 0.1) == .write(frames: 960))
        #expect(sync.step(anchor: 100, sampleTime: 1.0, now: 100.89, queued: 0.1) == .write(frames: 960))
    }

    @Test func soundBehindThePicturesPassesOverWhatIsAlreadyLate() {
        // After a stall the next sample would be heard 250 ms after its picture: 12,000 samples are passed over.
        #expect(sync.step(anchor: 100, sampleTime: 1.0, now: 101.15, queued: 0.1) == .skip(frames: 12_000))
        // The first samples of a clip whose first picture is already on the glass.
        #expect(sync.step(anchor: 100, sampleTime: 0, now: 100.02, queued: 0) == .skip(frames: 960))
    }

    @Test func soundAheadOfThePicturesWaitsWithSilenceAChunkAtMost() {
        // Before the first picture's vblank: 30 ms of silence first (1,440 samples, one chunk of 960 at a time).
        #expect(sync.step(anchor: 100.03, sampleTime: 0, now: 100, queued: 0) == .silence(frames: 960))
        #expect(sync.step(anchor: 100.03, sampleTime: 0, now: 100.01, queued: 0) == .silence(frames: 960))
        #expect(sync.step(anchor: 100.03, sampleTime: 0, now: 100.02, queued: 0.005) == .write(frames: 960))
        // After a resume the queue was dropped: the clip's clock restarts 2 s on, the sound waits for it.
        #expect(sync.step(anchor: 102.5, sampleTime: 0.5, now: 102.98, queued: 0) == .silence(frames: 960))
    }

    @Test func aHeldClipIsMute() {
        #expect(sync.step(anchor: nil, sampleTime: 3, now: 104, queued: 0.1) == .hold)
    }

    @Test func theQueueCountsNeverNegative() {
        // A device that has run dry may report a negative delay: it counts as nothing queued.
        #expect(sync.step(anchor: 100, sampleTime: 1.0, now: 101.0, queued: -0.05) == .write(frames: 960))
    }
}
