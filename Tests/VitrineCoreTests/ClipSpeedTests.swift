import Testing
import VitrineCore

@Suite struct ClipSpeedTests {
    @Test func aBoardThatDecodesHalfAClipsRateOrMorePlaysIt() {
        // 15 pictures in 0.25 s of one thread's CPU: 60 a second alone, 108 on two threads.
        let fast = ClipSpeed(pictures: 15, cpuSeconds: 0.25, threads: 2)
        #expect(abs(fast.rate - 108) < 0.001)
        #expect(!fast.tooSlow(frameRate: 30))
        #expect(!fast.tooSlow(frameRate: 120))
        #expect(fast.tooSlow(frameRate: 240))
        // One CPU: no gain from threads. 15 pictures in 1 s is exactly half of 30.
        let half = ClipSpeed(pictures: 15, cpuSeconds: 1, threads: 1)
        #expect(half.rate == 15)
        #expect(!half.tooSlow(frameRate: 30))
        #expect(half.tooSlow(frameRate: 30.5))
    }

    @Test func aFourKClipOnASlowBoardIsTooSlowAndSaysHowFast() {
        let slow = ClipSpeed(pictures: 2, cpuSeconds: 1.43, threads: 1)
        #expect(slow.tooSlow(frameRate: 30))
        #expect(slow.rateText == "1.4 pictures a second")
        // A file that does not say its rate is taken as a phone's 30.
        #expect(slow.tooSlow(frameRate: 0))
        #expect(!ClipSpeed(pictures: 16, cpuSeconds: 1, threads: 1).tooSlow(frameRate: 0))
    }

    @Test func theJudgementStopsAtAQuarterSecondOfClipOrHalfASecondOfCPU() {
        #expect(!ClipSpeed.enough(pictures: 7, cpuSeconds: 0.2, frameRate: 30))
        #expect(ClipSpeed.enough(pictures: 8, cpuSeconds: 0.2, frameRate: 30))
        #expect(ClipSpeed.enough(pictures: 15, cpuSeconds: 0.2, frameRate: 59.94))
        #expect(!ClipSpeed.enough(pictures: 14, cpuSeconds: 0.2, frameRate: 59.94))
        // A slow board: one picture after half a second of CPU answers already; none is not an answer yet.
        #expect(ClipSpeed.enough(pictures: 1, cpuSeconds: 0.5, frameRate: 30))
        #expect(!ClipSpeed.enough(pictures: 1, cpuSeconds: 0.49, frameRate: 30))
        #expect(!ClipSpeed.enough(pictures: 0, cpuSeconds: 3, frameRate: 30))
        // At least six pictures, even for a clip of a few a second (a time-lapse).
        #expect(!ClipSpeed.enough(pictures: 5, cpuSeconds: 0.1, frameRate: 2))
        #expect(ClipSpeed.enough(pictures: 6, cpuSeconds: 0.1, frameRate: 2))
    }

    @Test func aClipOfOnePictureHasNothingToKeepPaceWith() {
        let none = ClipSpeed(pictures: 0, cpuSeconds: 0.5, threads: 2)
        #expect(!none.tooSlow(frameRate: 30))
    }
}
