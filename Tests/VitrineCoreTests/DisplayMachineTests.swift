import Testing
import VitrineCore

/// A model of the kernel side of an atomic KMS driver, as the QEMU drivers and vc4 behave: a page flip with an
/// event on a CRTC that DPMS turned off is refused with EINVAL, one without DRM master with EACCES, one while
/// another is pending with EBUSY; a modeset lights the connector again. It executes the machine's actions and
/// records every broken rule (paint into the buffer on screen, a flip or modeset while dark).
final class FakeScreen {
    typealias Machine = DisplayMachine<String>

    var machine: Machine
    var buffers: [String?]
    /// The buffer the CRTC scans out, once one was set.
    var scanout: Int?
    var dpmsOn = true
    var master = true
    var connected = true
    var pendingFlip: (buffer: Int, serial: UInt64)?
    var timer: Double?
    /// Refuse every flip with this (a driver without page flips), on top of the atomic rules.
    var refuseFlips: Machine.Refusal?
    /// Refuse this many flips with EBUSY first.
    var busyFlips = 0
    var masterAvailable = true
    var rebuildSucceeds = true

    /// The time of the event being handled, for the answers the kernel gives at once.
    var now = 0.0
    var flips = 0
    var modesets = 0
    var violations: [String] = []
    var completed: [(String, Bool)] = []
    var reappeared: [String?] = []
    var redraws = 0
    var logs: [String] = []
    var warnings: [String] = []

    init(buffers count: Int = 2) {
        machine = Machine(bufferCount: count)
        buffers = Array(repeating: nil, count: count)
    }

    /// What a viewer sees: nothing while the output is off or unplugged.
    var glass: String? {
        guard dpmsOn, connected, let scanout else { return nil }
        return buffers[scanout] ?? "black"
    }

    var shouldBeDark: Bool { !machine.isLit }

    func send(_ event: Machine.Event) {
        for action in machine.handle(event) { execute(action) }
    }

    func execute(_ action: Machine.Action) {
        switch action {
        case .paint(let content, let buffer, let front):
            if buffers.count >= 2 && (buffer == scanout || buffer == pendingFlip?.buffer) {
                violations.append("painted \(content) into buffer \(buffer), which is on screen or flipping")
            }
            buffers[buffer] = content.hasPrefix("+") ? (buffers[front] ?? "black") + content : content
        case .flip(let buffer, let serial):
            flips += 1
            if shouldBeDark { violations.append("flip while dark") }
            let refusal: Machine.Refusal?
            if pendingFlip != nil || busyFlips > 0 {
                busyFlips = max(0, busyFlips - 1)
                refusal = .busy
            } else if !master {
                refusal = .denied
            } else if !dpmsOn || scanout == nil {
                refusal = .invalid
            } else {
                refusal = refuseFlips
            }
            if let refusal {
                send(.flipRefused(refusal, now: now))
            } else {
                pendingFlip = (buffer, serial)
            }
        case .modeset(let buffer):
            modesets += 1
            if shouldBeDark { violations.append("modeset while dark") }
            guard master else { return }
            scanout = buffer
            dpmsOn = true
        case .powerOn:
            if shouldBeDark { violations.append("power on while dark") }
            dpmsOn = true
        case .powerOff:
            dpmsOn = false
        case .armTimer(let at):
            timer = at
        case .disarmTimer:
            timer = nil
        case .dropMaster:
            if pendingFlip != nil { violations.append("master dropped with a flip in flight") }
            master = false
        case .takeMaster:
            master = masterAvailable
            send(.masterTaken(masterAvailable, now: now))
        case .rebuildBuffers:
            if pendingFlip != nil { violations.append("buffers freed with a flip in flight") }
            if rebuildSucceeds {
                buffers = Array(repeating: nil, count: buffers.count)
                scanout = nil
            }
            send(.rebuilt(rebuildSucceeds, now: now))
        case .completed(let content, let visible):
            completed.append((content, visible))
        case .reappeared(let content):
            reappeared.append(content)
        case .redraw:
            redraws += 1
        case .log(let line):
            logs.append(line)
        case .warn(let line):
            warnings.append(line)
        }
    }

    /// The vblank: the pending flip completes and its event is read.
    func vblank(now: Double = 0) {
        guard let flip = pendingFlip else { return }
        pendingFlip = nil
        scanout = flip.buffer
        send(.flipCompleted(serial: flip.serial, now: now))
    }

    func fireTimer() {
        guard let at = timer else { return }
        timer = nil
        now = at
        send(.timerFired(now: at))
    }

    func show(_ content: String, now: Double = 0) {
        self.now = now
        send(.show(content, overlay: content.hasPrefix("+"), now: now))
    }

    /// A screen showing `picture`, flipped to and settled.
    static func showing(_ picture: String = "A", buffers: Int = 2) -> FakeScreen {
        let screen = FakeScreen(buffers: buffers)
        screen.show("first")
        screen.show(picture)
        screen.vblank()
        screen.completed = []
        return screen
    }

    var visibleCompletions: [String] { completed.filter(\.1).map(\.0) }
    var allCompletions: [String] { completed.map(\.0) }
}

@Suite struct DisplayMachineTests {
    @Test func theFirstPictureSetsTheModeThenFlipsFollow() {
        let screen = FakeScreen()
        screen.show("A")
        #expect(screen.modesets == 1 && screen.flips == 0)
        #expect(screen.glass == "A")
        #expect(screen.visibleCompletions == ["A"])
        screen.show("B")
        #expect(screen.glass == "A", "B waits for its flip")
        screen.vblank()
        #expect(screen.glass == "B")
        #expect(screen.flips == 1 && screen.modesets == 1)
        #expect(screen.violations.isEmpty)
    }

    /// Case 1: after `screen off`, a `ctl next`, a timer advance with a fade, a banner: no flip, no modeset, the
    /// output stays off; `screen on` brings the newest picture back.
    @Test func screenOffStaysOffWhateverIsPresented() {
        let screen = FakeScreen.showing("A")
        screen.send(.power(on: false, now: 1))
        #expect(screen.glass == nil && !screen.dpmsOn)
        let (flips, modesets) = (screen.flips, screen.modesets)
        screen.show("B", now: 2)
        for weight in ["fade 1", "fade 2", "fade 3", "C"] { screen.show(weight, now: 3) }
        screen.show("+banner", now: 4)
        #expect(screen.flips == flips && screen.modesets == modesets)
        #expect(screen.glass == nil && !screen.dpmsOn)
        #expect(screen.warnings.isEmpty)
        // Every request is answered at once, so the player goes on.
        #expect(screen.allCompletions == ["B", "fade 1", "fade 2", "fade 3", "C", "+banner"])
        #expect(screen.visibleCompletions.isEmpty)
        #expect(screen.machine.blendsCleanly)
        screen.send(.power(on: true, now: 5))
        #expect(screen.glass == "C")
        #expect(screen.reappeared == ["C"])
        #expect(screen.allCompletions.count == 6, "C is not completed twice")
        screen.show("D", now: 6)
        screen.vblank()
        #expect(screen.glass == "D" && screen.modesets == modesets + 1, "flips again after the return")
        #expect(screen.violations.isEmpty)
    }

    @Test func screenOnWithNothingNewShowsThePictureThatWasThere() {
        let screen = FakeScreen.showing("A")
        screen.send(.power(on: false, now: 1))
        screen.send(.power(on: true, now: 2))
        #expect(screen.glass == "A")
        #expect(screen.reappeared == [nil])
        #expect(screen.violations.isEmpty)
    }

    @Test func powerOffWaitsForTheFlipInFlight() {
        let screen = FakeScreen.showing("A")
        screen.show("B")
        screen.send(.power(on: false, now: 1))
        #expect(screen.dpmsOn, "not yet: B's flip is in flight")
        screen.vblank()
        #expect(!screen.dpmsOn && screen.glass == nil)
        #expect(screen.visibleCompletions == ["B"])
        #expect(screen.violations.isEmpty)
    }

    @Test func aStartInsideOffHoursIsDarkFromTheFirstSecond() {
        let screen = FakeScreen()
        screen.send(.power(on: false, now: 0))
        #expect(!screen.dpmsOn)
        screen.show("background", now: 0.1)
        screen.show("A", now: 0.5)
        #expect(screen.modesets == 0 && screen.flips == 0 && !screen.dpmsOn)
        #expect(screen.allCompletions == ["background", "A"])
        screen.send(.power(on: true, now: 3600))
        #expect(screen.glass == "A" && screen.modesets == 1)
        #expect(screen.violations.isEmpty)
    }

    @Test func refusedWithBusyIsTriedAgainAVblankLater() {
        let screen = FakeScreen.showing("A")
        screen.busyFlips = 2
        screen.show("B", now: 1)
        #expect(screen.timer == 1 + DisplayMachine<String>.busyRetryDelay)
        screen.fireTimer()
        screen.fireTimer()
        #expect(screen.pendingFlip != nil)
        screen.vblank()
        #expect(screen.glass == "B" && screen.warnings.isEmpty && screen.machine.blendsCleanly)
        #expect(screen.violations.isEmpty)
    }

    @Test func busyForeverEndsInAModesetForThatFrame() {
        let screen = FakeScreen.showing("A")
        screen.busyFlips = 1000
        screen.show("B", now: 1)
        for _ in 0..<DisplayMachine<String>.busyRetryLimit { screen.fireTimer() }
        #expect(screen.glass == "B")
        #expect(screen.visibleCompletions == ["B"])
    }

    @Test func aDriverThatRefusesFlipsGetsModesetsButIsTriedAgainEachFrame() {
        let screen = FakeScreen.showing("A")
        screen.refuseFlips = .other("Invalid argument")
        screen.show("B", now: 1)
        #expect(screen.glass == "B")
        #expect(!screen.machine.blendsCleanly)
        #expect(screen.warnings.count == 1)
        screen.show("C", now: 2)
        #expect(screen.glass == "C")
        #expect(screen.warnings.count == 1, "said once")
        // The driver takes flips again: the fallback ends.
        screen.refuseFlips = nil
        let flips = screen.flips
        screen.show("D", now: 3)
        #expect(screen.flips == flips + 1)
        screen.vblank()
        #expect(screen.glass == "D" && screen.machine.blendsCleanly)
        #expect(screen.logs.contains("page flips complete again"))
        #expect(screen.violations.isEmpty)
    }

    @Test func invalidOrDeniedWhileLitFallsBackToAModeset() {
        for refusal in [DisplayMachine<String>.Refusal.invalid, .denied] {
            let screen = FakeScreen.showing("A")
            screen.refuseFlips = refusal
            screen.show("B", now: 1)
            #expect(screen.glass == "B")
            #expect(screen.visibleCompletions == ["B"])
        }
    }

    /// Case 2: the watchdog takes a flip without an event as done; the event that comes late is not taken for the
    /// next flip's (which would let a paint land in the buffer being scanned out).
    @Test func theWatchdogTakesAFlipAsDoneAndALateEventIsIgnored() {
        let screen = FakeScreen.showing("A")
        screen.show("B", now: 1)
        let late = screen.pendingFlip
        screen.pendingFlip = nil
        screen.fireTimer()
        #expect(screen.visibleCompletions == ["B"])
        #expect(screen.warnings.count == 1)
        #expect(!screen.machine.blendsCleanly)
        screen.show("C", now: 2)
        let next = screen.pendingFlip
        if let late {
            screen.send(.flipCompleted(serial: late.serial, now: 2.01))
        }
        #expect(screen.visibleCompletions == ["B"], "the late event does not complete C's flip")
        #expect(screen.machine.flipInFlight)
        screen.pendingFlip = next
        screen.vblank()
        #expect(screen.visibleCompletions == ["B", "C"])
        #expect(screen.machine.blendsCleanly)
    }

    /// Case 2: a VT switch with a flip in flight gives master up only after the flip; while away nothing is flipped;
    /// back, the mode is set once with the newest picture and flips follow.
    @Test func aVTSwitchWithAFlipInFlight() {
        let screen = FakeScreen.showing("A")
        screen.show("fade 1", now: 1)
        screen.send(.seatReleaseRequested(now: 1.001))
        #expect(screen.master, "waits for the flip")
        screen.vblank(now: 1.016)
        #expect(!screen.master && screen.machine.seat == .away)
        let (flips, modesets) = (screen.flips, screen.modesets)
        screen.show("fade 2", now: 1.05)
        screen.show("B", now: 1.1)
        #expect(screen.flips == flips && screen.modesets == modesets)
        screen.send(.seatReturned(now: 5))
        #expect(screen.master && screen.glass == "B" && screen.modesets == modesets + 1)
        screen.show("C", now: 6)
        #expect(screen.flips == flips + 1 && screen.modesets == modesets + 1, "a flip, not a modeset")
        screen.vblank()
        #expect(screen.glass == "C")
        #expect(screen.violations.isEmpty)
    }

    @Test func aVTReturnWhileTheScreenIsOffKeepsItOff() {
        let screen = FakeScreen.showing("A")
        screen.send(.power(on: false, now: 1))
        screen.send(.seatReleaseRequested(now: 2))
        // The console lights the panel while it has the VT.
        screen.dpmsOn = true
        screen.send(.seatReturned(now: 3))
        #expect(!screen.dpmsOn)
        #expect(screen.violations.isEmpty)
    }

    @Test func masterRefusedOnReturnKeepsTheScreenAlone() {
        let screen = FakeScreen.showing("A")
        screen.send(.seatReleaseRequested(now: 1))
        screen.masterAvailable = false
        screen.send(.seatReturned(now: 2))
        #expect(screen.machine.seat == .away)
        screen.show("B", now: 3)
        #expect(screen.warnings.count == 1 && screen.violations.isEmpty)
    }

    /// Case 2: a reconfigure (another mode after a replug) with a flip in flight frees the buffers only after it.
    @Test func aReconfigureWaitsForTheFlipThenAsksForARedraw() {
        let screen = FakeScreen.showing("A")
        screen.show("B", now: 1)
        screen.send(.unplugged(now: 1.001))
        screen.send(.plugged(sameMode: false, now: 2))
        #expect(screen.redraws == 0)
        screen.vblank(now: 2.01)
        #expect(screen.redraws == 1)
        screen.show("B at the new size", now: 2.5)
        #expect(screen.glass == "B at the new size")
        #expect(screen.violations.isEmpty)
    }

    /// Case 7: a failed rebuild leaves no buffers; what comes next is taken without painting.
    @Test func aFailedRebuildShowsNothingAndDoesNotCrash() {
        let screen = FakeScreen.showing("A")
        screen.rebuildSucceeds = false
        screen.send(.plugged(sameMode: false, now: 1))
        #expect(!screen.machine.hasBuffers)
        screen.show("B", now: 2)
        #expect(screen.allCompletions == ["B"] && screen.visibleCompletions.isEmpty)
        #expect(screen.warnings.count == 1)
    }

    /// Case 5: a TV that drops hotplug in standby during off hours stays dark when it comes back; the morning lights it.
    @Test func unplugDuringOffHoursThenMorning() {
        let screen = FakeScreen.showing("A")
        screen.send(.power(on: false, now: 1))
        screen.send(.unplugged(now: 2))
        screen.connected = false
        screen.show("B", now: 3)
        // Plugged back in at night: the TV comes up lit, the player turns it off again.
        screen.connected = true
        screen.dpmsOn = true
        screen.send(.plugged(sameMode: true, now: 4))
        #expect(!screen.dpmsOn && screen.glass == nil)
        screen.send(.power(on: true, now: 3600))
        #expect(screen.glass == "B")
        #expect(screen.violations.isEmpty)
    }

    @Test func unpluggedWhileOnHoldsContentUntilPlugged() {
        let screen = FakeScreen.showing("A")
        screen.send(.unplugged(now: 1))
        let flips = screen.flips
        screen.show("B", now: 2)
        #expect(screen.flips == flips)
        screen.send(.plugged(sameMode: true, now: 3))
        #expect(screen.glass == "B")
        #expect(screen.violations.isEmpty)
    }

    /// Case 7: content replacing a waiting frame completes it, so the player is not left waiting for its flip.
    @Test func aBackgroundReplacingAWaitingFrameCompletesIt() {
        let screen = FakeScreen.showing("A")
        screen.show("B", now: 1)
        screen.show("C", now: 1.001)
        screen.show("background", now: 1.002)
        #expect(screen.completed.map(\.0) == ["C"])
        #expect(screen.completed.map(\.1) == [false])
        screen.vblank()
        screen.vblank()
        #expect(screen.glass == "background")
        #expect(screen.allCompletions == ["C", "B", "background"])
    }

    @Test func anOverlayIsPaintedOverThePictureOnScreenAndDroppedWhileDark() {
        let screen = FakeScreen.showing("A")
        screen.show("+Paused", now: 1)
        screen.vblank()
        #expect(screen.glass == "A+Paused")
        screen.send(.power(on: false, now: 2))
        screen.show("+banner", now: 3)
        #expect(screen.completed.last.map { $0.0 == "+banner" && !$0.1 } == true)
        screen.send(.power(on: true, now: 4))
        #expect(screen.glass == "A+Paused")
    }

    @Test func aWakeSetsTheModeAgainOrKeepsTheScreenOff() {
        let screen = FakeScreen.showing("A")
        // Some drivers come back from S3 with the output dark.
        screen.scanout = nil
        screen.send(.woke(now: 10))
        #expect(screen.glass == "A")
        screen.send(.power(on: false, now: 11))
        screen.dpmsOn = true
        screen.send(.woke(now: 20))
        #expect(!screen.dpmsOn)
        #expect(screen.violations.isEmpty)
    }

    /// Three buffers: the next step is painted while the flip is in flight and flipped the moment it lands.
    @Test func aThirdBufferPreparesTheNextStepDuringTheFlight() {
        let screen = FakeScreen.showing("A", buffers: 3)
        screen.show("fade 1", now: 1)
        let flips = screen.flips
        screen.show("fade 2", now: 1.001)
        #expect(screen.flips == flips, "painted, not flipped yet")
        #expect(screen.buffers.contains("fade 2"))
        screen.vblank(now: 1.016)
        #expect(screen.flips == flips + 1, "flipped at once when fade 1 landed")
        #expect(screen.glass == "fade 1")
        screen.show("fade 3", now: 1.017)
        screen.show("B", now: 1.018)
        #expect(screen.completed.map(\.0) == ["fade 1", "fade 3"], "fade 3 was replaced by B before it showed")
        screen.vblank(now: 1.033)
        #expect(screen.glass == "fade 2")
        screen.vblank(now: 1.05)
        #expect(screen.glass == "B")
        #expect(screen.violations.isEmpty)
    }

    @Test func preparedContentWaitsWhenTheScreenGoesOff() {
        let screen = FakeScreen.showing("A", buffers: 3)
        screen.show("B", now: 1)
        screen.show("C", now: 1.001)
        screen.send(.power(on: false, now: 1.002))
        screen.vblank(now: 1.016)
        #expect(!screen.dpmsOn && screen.pendingFlip == nil)
        #expect(screen.allCompletions == ["B", "C"])
        screen.send(.power(on: true, now: 5))
        #expect(screen.glass == "C")
        #expect(screen.allCompletions == ["B", "C"], "C is not completed twice")
        #expect(screen.violations.isEmpty)
    }

    @Test func oneBufferPaintsInPlaceAndCannotBlend() {
        let screen = FakeScreen.showing("A", buffers: 1)
        #expect(!screen.machine.blendsCleanly)
        screen.show("B", now: 1)
        screen.vblank()
        #expect(screen.glass == "B")
        screen.send(.power(on: false, now: 2))
        screen.show("C", now: 3)
        screen.send(.power(on: true, now: 4))
        #expect(screen.glass == "C")
    }
}
