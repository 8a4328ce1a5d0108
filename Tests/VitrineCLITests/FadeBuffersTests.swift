import Testing
import VitrineCore
import VitrineImage
import VitrineRuntime

/// A third scanout buffer only where a crossfade step takes more than half a frame to blend.
@Suite struct FadeBuffersTests {
    @Test(arguments: [
        // This machine at 1080p (0.4 ms), a Pi Zero 2 at 1080p (about 20 ms), a guest under TCG.
        (0.0004, 60, 2), (0.020, 60, 3), (0.008, 60, 2), (0.009, 60, 3), (0.009, 50, 2), (0.006, 120, 3),
    ])
    func aThirdBufferOnlyWhereBlendingIsSlow(step: Double, refresh: Int, buffers: Int) {
        #expect(PlayerRuntime.fadeBuffers(stepSeconds: step, refreshHz: refresh) == buffers)
    }

    @Test func theMeasuredStepScalesWithThePicture() {
        // A clock that advances one tick per call: each blend of the strip "takes" one second, so the whole
        // picture's estimate is its height over the strip's 32 rows, whatever this machine's speed.
        var now = 0.0
        let tick = {
            now += 1
            return now
        }
        #expect(FrameBlender.stepSeconds(at: Size(width: 1920, height: 1080), clock: tick) == 1080.0 / 32)
        #expect(FrameBlender.stepSeconds(at: Size(width: 64, height: 16), clock: tick) == 1)
        #expect(FrameBlender.stepSeconds(at: Size(width: 0, height: 16), clock: tick) == 0)
    }
}
