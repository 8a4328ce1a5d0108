import Testing

@testable import VitrineCore

/// The room's presence with a manual clock: a PIR sensor's line and input, `offAfter` ten minutes.
@Suite struct PresenceMachineTests {
    static func text(_ actions: [PresenceMachine.Action]) -> [String] { actions.map(\.description) }

    @Test func nobodyForOffAfterMakesTheRoomAbsentAndMotionBringsItBack() {
        var presence = PresenceMachine(offAfter: 600)
        #expect(Self.text(presence.handle(.start(motion: false, now: 0))) == ["arm 600"])
        // The timer fires when asked: nobody came.
        #expect(
            Self.text(presence.handle(.deadline(now: 600)))
                == ["absent (no motion or input for 10 min)", "disarm"])
        #expect(!presence.isPresent)
        // Someone walks in: present at once, and while the sensor sees motion nothing counts down.
        #expect(Self.text(presence.handle(.motion(true, now: 900))) == ["present (motion)"])
        #expect(presence.deadline == nil)
        // The sensor goes idle: the countdown starts from then, not from the first edge.
        #expect(Self.text(presence.handle(.motion(false, now: 1000))) == ["arm 1600"])
        #expect(Self.text(presence.handle(.deadline(now: 1600))).first == "absent (no motion or input for 10 min)")
    }

    /// Someone sitting still in front of a sensor that keeps its line active is never timed out.
    @Test func aSensorHeldActiveKeepsTheRoomPresent() {
        var presence = PresenceMachine(offAfter: 60)
        #expect(Self.text(presence.handle(.start(motion: true, now: 0))).isEmpty, "no countdown while active")
        #expect(Self.text(presence.handle(.deadline(now: 5000))).isEmpty)
        #expect(presence.isPresent)
        // A repeated level (a second rising edge report) changes nothing.
        #expect(Self.text(presence.handle(.motion(true, now: 5001))).isEmpty)
    }

    @Test func inputCountsAsPresence() {
        var presence = PresenceMachine(offAfter: 60)
        _ = presence.handle(.start(motion: false, now: 0))
        // A key at 50 s moves the deadline.
        #expect(Self.text(presence.handle(.activity(now: 50))) == ["arm 110"])
        // The old deadline firing (a timer armed before the key) does nothing but re-arm.
        #expect(Self.text(presence.handle(.deadline(now: 60))) == ["arm 110"])
        #expect(presence.isPresent)
        #expect(Self.text(presence.handle(.deadline(now: 110))).first == "absent (no motion or input for 1 min)")
        // A touch while absent brings the screen back.
        #expect(Self.text(presence.handle(.activity(now: 200))) == ["present (input)", "arm 260"])
    }

    /// An input that arrives while the sensor sees motion does not start a countdown; the idle edge does.
    @Test func inputDuringMotionWaitsForTheSensor() {
        var presence = PresenceMachine(offAfter: 60)
        _ = presence.handle(.start(motion: false, now: 0))
        #expect(Self.text(presence.handle(.motion(true, now: 10))) == ["disarm"])
        #expect(Self.text(presence.handle(.activity(now: 20))).isEmpty)
        #expect(Self.text(presence.handle(.motion(false, now: 30))) == ["arm 90"])
    }
}
