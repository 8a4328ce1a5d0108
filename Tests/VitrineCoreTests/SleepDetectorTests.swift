import Testing
import VitrineCore

@Suite struct SleepDetectorTests {
    @Test func aBootTimeJumpIsASleep() {
        var detector = SleepDetector(offset: 0.5, suspendCount: 3)
        let drift = detector.check(offset: 0.9, suspendCount: 3, now: 100)
        #expect(drift == nil, "drift, not a sleep")
        let jump = detector.check(offset: 7.2, suspendCount: 3, now: 101)
        #expect(jump == "the system slept for 6 s")
        let after = detector.check(offset: 7.2, suspendCount: 3, now: 102)
        #expect(after == nil)
    }

    /// s2idle: the clocks move together; the counter moves only after user space runs again, seconds later.
    @Test func theSuspendCounterAfterALateTimerIsTheSameWake() {
        var detector = SleepDetector(offset: 0, suspendCount: 3)
        #expect(SleepDetector.firedLate(deadline: 50, now: 54))
        #expect(!SleepDetector.firedLate(deadline: 50, now: 51))
        let late = detector.wake(offset: 0, suspendCount: 3, now: 54)
        #expect(late)
        let counter = detector.check(offset: 0, suspendCount: 4, now: 57)
        #expect(counter == nil, "one more sign of the same wake")
        let later = detector.check(offset: 0, suspendCount: 5, now: 200)
        #expect(later == "the system slept (s2idle)")
        let again = detector.wake(offset: 0, suspendCount: 5, now: 205)
        #expect(!again)
        let next = detector.wake(offset: 0, suspendCount: 5, now: 211)
        #expect(next)
    }
}
