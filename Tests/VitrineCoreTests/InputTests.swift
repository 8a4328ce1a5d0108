import Testing
import VitrineCore

@Suite struct GestureRecognizerTests {
    /// A 154x86 mm panel (the Pi Touch Display's size), upright.
    func recognizer(rotation: Rotation = .none, physical: Size? = Size(width: 154, height: 86)) -> GestureRecognizer {
        GestureRecognizer(rotation: rotation, physicalSize: physical, pixelSize: Size(width: 800, height: 480))
    }

    func stroke(
        _ recognizer: inout GestureRecognizer, from: (Double, Double), to: (Double, Double), seconds: Double = 0.2
    ) -> GestureRecognizer.Gesture? {
        recognizer.down(x: from.0, y: from.1, time: 10)
        recognizer.move(x: (from.0 + to.0) / 2, y: (from.1 + to.1) / 2)
        recognizer.move(x: to.0, y: to.1)
        return recognizer.up(time: 10 + seconds)
    }

    @Test func tapsSwipesAndLongPresses() {
        var gestures = recognizer()
        #expect(stroke(&gestures, from: (0.5, 0.5), to: (0.505, 0.5), seconds: 0.1) == .tap)
        #expect(stroke(&gestures, from: (0.7, 0.5), to: (0.3, 0.52)) == .swipe(.left))
        #expect(stroke(&gestures, from: (0.3, 0.5), to: (0.7, 0.45)) == .swipe(.right))
        #expect(stroke(&gestures, from: (0.5, 0.8), to: (0.5, 0.2)) == .swipe(.up))
        #expect(stroke(&gestures, from: (0.5, 0.2), to: (0.52, 0.8)) == .swipe(.down))
        #expect(stroke(&gestures, from: (0.5, 0.5), to: (0.5, 0.5), seconds: 1.2) == .longPress)
        // Held too long for a tap, too short for a long press; or a wobble too big for a tap, too small to swipe.
        #expect(stroke(&gestures, from: (0.5, 0.5), to: (0.5, 0.5), seconds: 0.5) == nil)
        #expect(stroke(&gestures, from: (0.5, 0.5), to: (0.55, 0.5), seconds: 0.1) == nil)
    }

    @Test func distancesAreMillimetresWhenTheSizeIsKnown() {
        // 0.06 of 154 mm is 9.2 mm: short of a 12 mm swipe. Without a size, 0.06 of the width is 0.1 of the
        // shorter side: a swipe.
        var sized = recognizer()
        #expect(stroke(&sized, from: (0.5, 0.5), to: (0.44, 0.5)) == nil)
        var unsized = recognizer(physical: nil)
        #expect(stroke(&unsized, from: (0.5, 0.5), to: (0.44, 0.5)) == .swipe(.left))
    }

    @Test func directionsFollowThePanelRotation() {
        // A portrait-scanout panel hung landscape (rotation 90): the viewer's left is the scanout's up.
        var turned = recognizer(rotation: .clockwise90)
        #expect(stroke(&turned, from: (0.5, 0.8), to: (0.5, 0.2)) == .swipe(.left))
        #expect(stroke(&turned, from: (0.2, 0.5), to: (0.8, 0.5)) == .swipe(.up))
        var flipped = recognizer(rotation: .upsideDown)
        #expect(stroke(&flipped, from: (0.7, 0.5), to: (0.3, 0.5)) == .swipe(.right))
        var other = recognizer(rotation: .clockwise270)
        #expect(stroke(&other, from: (0.5, 0.8), to: (0.5, 0.2)) == .swipe(.right))
    }

    @Test func aSecondFingerCancels() {
        var gestures = recognizer()
        gestures.down(x: 0.7, y: 0.5, time: 0)
        gestures.down(x: 0.2, y: 0.5, time: 0.05)
        gestures.move(x: 0.2, y: 0.5)
        #expect(gestures.up(time: 0.1) == nil)
        #expect(gestures.up(time: 0.15) == nil)
        #expect(stroke(&gestures, from: (0.5, 0.5), to: (0.5, 0.5), seconds: 0.1) == .tap)
    }
}

@Suite struct InputActionTests {
    @Test func infoTellsTheSlideAndAsksForThePairingCode() throws {
        var (player, _) = try PlayerTests().started()
        let shown = PlayerTests.text(player.handle(.user(.info, now: 1)))
        #expect(shown.count == 2)
        #expect(shown.first?.hasPrefix("announce ") == true)
        #expect(shown.last == "pairing code")
    }

    @Test func navigationHoldsTheTimerThenGivesAFullInterval() throws {
        var (player, prefetch) = try PlayerTests().started()
        _ = player.handle(.flipDone(now: 0))
        var options = player.options
        options.pauseOnInput = 30
        _ = player.update(options)
        let budget = MemoryBudget(limit: 1 << 20)
        _ = player.handle(
            .decoded(prefetch, try Frame(size: Size(width: 4, height: 4), budget: budget, purpose: "t"), now: 1))
        let next = player.handle(.user(.next, now: 2))
        #expect(PlayerTests.text(next).contains("present A/b"))
        #expect(PlayerTests.text(next).suffix(2) == ["disarm", "hold until 32.0"])
        _ = player.handle(.flipDone(now: 2.02))
        // Another key restarts the hold.
        let again = player.handle(.user(.previous, now: 10))
        #expect(PlayerTests.text(again).last == "hold until 40.0")
        let request = try #require(PlayerTests.requests(again).first)
        _ = player.handle(
            .decoded(request, try Frame(size: Size(width: 4, height: 4), budget: budget, purpose: "t"), now: 11))
        _ = player.handle(.flipDone(now: 11.02))
        // The hold ends: a full interval (10 s) from then, not what was left.
        #expect(PlayerTests.text(player.handle(.inputHoldEnded(now: 40))) == ["arm 50.0"])
    }

    @Test func theUserPauseHoldsUntilPressedAgain() throws {
        var (player, _) = try PlayerTests().started()
        #expect(PlayerTests.text(player.handle(.user(.pause, now: 2))) == ["disarm"])
        #expect(PlayerTests.text(player.handle(.user(.pause, now: 9))) == ["arm 17.0"])
    }

    @Test func categoryKeysSwitchAndAnnounceQuitOnlyWhenBound() throws {
        var (player, _) = try PlayerTests().started()
        let second = player.handle(.user(.category2, now: 1))
        #expect(PlayerTests.text(second).contains("index B"))
        #expect(PlayerTests.text(second).last == "announce \"B\"")
        #expect(PlayerTests.text(player.handle(.user(.quit, now: 2))).last == "quit")
        #expect(KeyMap.defaults.action(forKey: "Q") == nil)
        #expect(KeyMap.defaults.action(forKey: "5") == .category5)
        #expect(KeyMap.Action.category7.categoryNumber == 7)
        #expect(KeyMap.Action.next.categoryNumber == nil)
        #expect(KeyMap.defaults.action(forKey: "NextSong") == .next)
        #expect(KeyMap.defaults.action(forKey: "PlayPause") == .pause)
    }
}

@Suite struct VTSwitchChordTests {
    @Test func ctrlAltFunctionKeysNameTheirVT() {
        var chord = VTSwitchChord()
        #expect(chord.key("LeftCtrl", pressed: true) == nil)
        #expect(chord.key("LeftAlt", pressed: true) == nil)
        #expect(chord.key("F2", pressed: true) == 2)
        #expect(chord.key("F2", pressed: false) == nil)
        #expect(chord.key("RightAlt", pressed: true) == nil)
        #expect(chord.key("F12", pressed: true) == 12)
    }

    @Test func withoutBothModifiersNothingSwitches() {
        var chord = VTSwitchChord()
        #expect(chord.key("F1", pressed: true) == nil)
        _ = chord.key("RightCtrl", pressed: true)
        #expect(chord.key("F3", pressed: true) == nil)
        _ = chord.key("RightCtrl", pressed: false)
        _ = chord.key("LeftAlt", pressed: true)
        #expect(chord.key("F3", pressed: true) == nil)
        _ = chord.key("LeftCtrl", pressed: true)
        #expect(chord.key("Right", pressed: true) == nil)
        #expect(chord.modifierHeld)
        chord.reset()
        #expect(!chord.modifierHeld)
        #expect(chord.key("F4", pressed: true) == nil)
    }
}
