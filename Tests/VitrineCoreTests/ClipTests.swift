import Testing
import VitrineCore

/// Clips in the show (`Player`) and their pictures' pacing (`ClipPacer`), with a manual clock.
@Suite struct ClipTests {
    let budget = MemoryBudget(limit: 1 << 20)

    func frame() throws -> Frame { try Frame(size: Size(width: 16, height: 16), budget: budget, purpose: "test") }

    static func slide(_ name: String, in category: String = "A") -> Slide {
        Slide(id: SlideID(category: category, name: name), original: "/lib/\(category)/\(name)", renditions: [])
    }

    /// A player with `names` in category A (file names with their extensions), the first presented at t=0.
    func started(_ names: [String], interval: Double = 10) throws -> (Player, [Player.Action]) {
        var player = Player(options: Player.Options(interval: interval))
        _ = player.handle(.start(categories: ["A"], now: 0))
        let decode = player.handle(.indexed(category: "A", slides: names.map { Self.slide($0) }, now: 0))
        let request = try #require(PlayerTests.requests(decode).first)
        let shown = player.handle(.decoded(request, try frame(), now: 0))
        return (player, shown)
    }

    // MARK: The show

    @Test func aClipHoldsTheSlideTimerWhileItPlaysAndTheShowMovesOnAtItsEnd() throws {
        var (player, shown) = try started(["beach.mp4", "d.jpg"])
        let text = PlayerTests.text(shown)
        #expect(text.contains("play A/beach.mp4"))
        // The timer is not armed for the interval: the clip's end moves the show on, however long it is.
        #expect(!text.contains { $0.hasPrefix("arm") })
        #expect(player.timer.reasons.contains(.playing))
        let prefetch = try #require(PlayerTests.requests(shown).first)
        _ = player.handle(.decoded(prefetch, try frame(), now: 1))
        _ = player.handle(.flipDone(now: 1))
        #expect(player.status(now: 30).slide?.name == "beach.mp4")
        let ended = player.handle(.clipEnded(SlideID(category: "A", name: "beach.mp4"), now: 42))
        // The deadline is now: the timer fires at once and the next slide follows.
        #expect(PlayerTests.text(ended) == ["arm 42.0"])
        let next = player.handle(.timerFired(generation: player.timer.generation, now: 42))
        #expect(PlayerTests.text(next).first == "present A/d.jpg")
        #expect(PlayerTests.text(next).contains("arm 52.0"))
    }

    @Test func aPauseHoldsTheClipAndTheScreenOffToo() throws {
        var (player, _) = try started(["beach.mp4", "d.jpg"])
        #expect(PlayerTests.text(player.handle(.command(.pause, now: 3))) == ["clip pause"])
        #expect(PlayerTests.text(player.handle(.command(.resume, now: 5))) == ["clip resume"])
        let off = PlayerTests.text(player.handle(.command(.screen(on: false), now: 6)))
        #expect(off.contains("screen off") && off.last == "clip pause")
        let on = PlayerTests.text(player.handle(.command(.screen(on: true), now: 9)))
        #expect(on.contains("screen on") && on.last == "clip resume")
        // A hold after a key does not stop a clip: the key's own action decides (next leaves it).
        #expect(!PlayerTests.text(player.handle(.user(.info, now: 10))).contains { $0.hasPrefix("clip") })
    }

    @Test func aClipPresentedWhileTheShowIsPausedWaitsOnItsFirstPicture() throws {
        var player = Player(options: Player.Options(interval: 10))
        _ = player.handle(.start(categories: ["A"], now: 0))
        _ = player.handle(.command(.pause, now: 0))
        let decode = player.handle(.indexed(category: "A", slides: [Self.slide("beach.mp4")], now: 0))
        let request = try #require(PlayerTests.requests(decode).first)
        #expect(
            PlayerTests.text(player.handle(.decoded(request, try frame(), now: 1))).contains(
                "play A/beach.mp4 looping paused"))
        #expect(PlayerTests.text(player.handle(.command(.resume, now: 2))) == ["clip resume"])
    }

    @Test func nextLeavesTheClipAndStopsIt() throws {
        var (player, shown) = try started(["beach.mp4", "d.jpg", "e.jpg"])
        let prefetch = try #require(PlayerTests.requests(shown).first)
        _ = player.handle(.decoded(prefetch, try frame(), now: 1))
        _ = player.handle(.flipDone(now: 1))
        let next = PlayerTests.text(player.handle(.command(.next, now: 4)))
        #expect(Array(next.prefix(2)) == ["present A/d.jpg", "clip stop"])
        // A photo again: the interval counts.
        #expect(next.contains("arm 14.0"))
        #expect(!player.timer.reasons.contains(.playing))
        // The stopped clip's end, arriving late, changes nothing.
        #expect(player.handle(.clipEnded(SlideID(category: "A", name: "beach.mp4"), now: 5)).isEmpty)
    }

    @Test func theOnlyClipOfACategoryLoopsUntilAnotherSlideArrives() throws {
        var (player, shown) = try started(["loop.mp4"])
        #expect(PlayerTests.text(shown).contains("play A/loop.mp4 looping"))
        #expect(player.clip?.loop == true)
        let added = PlayerTests.text(player.handle(.photosAdded([Self.slide("new.jpg")], category: "A", now: 30)))
        #expect(added.contains("clip stopLooping"))
        #expect(player.clip?.loop == false)
    }

    @Test func aClipThatFailsWhilePlayingIsSkippedWithOneLineAndTheShowGoesOn() throws {
        var (player, _) = try started(["broken.mov", "d.jpg"])
        let failed = PlayerTests.text(
            player.handle(
                .clipFailed(SlideID(category: "A", name: "broken.mov"), message: "broken.mov: damaged", now: 2)))
        #expect(failed == ["warn skipped broken.mov: damaged", "arm 2.0"])
    }

    @Test func theBackgroundStopsTheClip() throws {
        var (player, _) = try started(["beach.mp4"])
        let gone = PlayerTests.text(
            player.handle(.photosRemoved([SlideID(category: "A", name: "beach.mp4")], category: "A", now: 3)))
        #expect(gone.contains("background") && gone.last == "clip stop")
        #expect(player.clip == nil)
    }

    @Test func clipsAreToldByTheirNames() {
        for name in ["a.mp4", "B.MOV", "c.m4v", "d.mkv", "e.webm"] { #expect(Library.isClipName(name), "\(name)") }
        for name in ["a.jpg", "mp4", "a.mp4.part", "a.heic"] { #expect(!Library.isClipName(name), "\(name)") }
        #expect(Library.isPhotoName("holiday.MOV"))
        #expect(!Library.isPhotoName("holiday.mov.part"))
    }

    // MARK: Pacing

    /// Vblanks every `refresh` s from t=0; the pacer is asked at each vblank (a flip completes there) and the
    /// picture it picks reaches the glass at the next one. Returns when each picture reached the glass.
    static func play(
        times: [Double], refresh: Double, vblanks: Int, decodedBy: (Int) -> Double = { _ in 0 }
    ) -> (shown: [Int: Double], pacer: ClipPacer) {
        var pacer = ClipPacer(refresh: refresh)
        pacer.sawVblank(at: 0)
        pacer.start(now: 0.001)
        var waiting: [(index: Int, time: Double)] = []
        var next = 0
        var shown: [Int: Double] = [:]
        var inFlight: Int?
        for vblank in 0..<vblanks {
            let now = Double(vblank) * refresh
            pacer.sawVblank(at: now)
            if let flight = inFlight {
                pacer.shown(time: times[flight], glass: now, vblank: true)
                shown[flight] = now
                inFlight = nil
            }
            while next < times.count, decodedBy(next) <= now {
                waiting.append((next, times[next]))
                next += 1
            }
            if case .show(let index, let dropping) = pacer.decide(waiting: waiting.map(\.time), now: now + 0.001) {
                pacer.dropped(dropping)
                inFlight = waiting[index].index
                waiting.removeFirst(index + 1)
            }
        }
        return (shown, pacer)
    }

    @Test func thirtyFramesASecondOnSixtyHertzShowEachPictureForTwoVblanksOnTime() {
        let refresh = 1.0 / 60
        let times = (0..<300).map { Double($0) / 30 }
        let (shown, pacer) = Self.play(times: times, refresh: refresh, vblanks: 620)
        #expect(shown.count == 300)
        for (index, glass) in shown {
            // At its due vblank: never early by more than half a vblank, never late by one.
            #expect(abs(glass - (pacer.due(times[index]) ?? 0)) <= refresh / 2 + 1e-6, "picture \(index) at \(glass)")
        }
        #expect(pacer.figures.dropped == 0 && pacer.figures.late == 0)
    }

    @Test func aDecoderThatFallsBehindCostsPicturesNotThePace() {
        let refresh = 1.0 / 60
        let times = (0..<90).map { Double($0) / 30 }
        // Pictures 30 to 44 arrive half a second late, all at once.
        let (shown, pacer) = Self.play(times: times, refresh: refresh, vblanks: 200) { index in
            (30..<45).contains(index) ? 1.5 : 0
        }
        #expect(pacer.figures.dropped > 0)
        // What was shown after the stall is on time again: late pictures were dropped, not queued.
        for (index, glass) in shown where index >= 46 {
            #expect(abs(glass - (pacer.due(times[index]) ?? 0)) <= refresh / 2 + 1e-6, "picture \(index) at \(glass)")
        }
        #expect(shown[89] != nil)
    }

    @Test func pausingKeepsTheClipsPlace() {
        var pacer = ClipPacer(refresh: 0)
        pacer.start(now: 100)
        #expect(pacer.decide(waiting: [0, 0.5], now: 100.2) == .show(index: 0, dropping: 0))
        pacer.pause(now: 100.25)
        #expect(pacer.decide(waiting: [0.5], now: 200) == .paused)
        pacer.resume(now: 300)
        #expect(abs(pacer.position(now: 300.1) - 0.35) < 1e-9)
        #expect(pacer.decide(waiting: [0.5], now: 300.1) == .wait(until: 300.25))
        #expect(pacer.decide(waiting: [0.5], now: 300.25) == .show(index: 0, dropping: 0))
    }

    @Test func aResumedClipKeepsTheVblanksPhase() throws {
        let refresh = 1.0 / 60
        var pacer = ClipPacer(refresh: refresh)
        pacer.sawVblank(at: 10)
        pacer.start(now: 10.001)
        pacer.pause(now: 11.005)
        // Resumed between two vblanks: the clip's pictures (every 1/30 s) still fall on vblanks.
        pacer.resume(now: 14.3)
        for index in 0..<10 {
            let due = try #require(pacer.due(Double(index) / 30))
            let phase = (due - 10) / refresh
            #expect(abs(phase - phase.rounded()) < 1e-6, "picture \(index) due at \(due)")
        }
        // Where it was (clip time 0 was the vblank after the next at the start), give or take the two vblanks it
        // waits for and the half vblank it moves onto the grid.
        #expect(abs(pacer.position(now: 14.3) - (11.005 - (10 + 2 * refresh))) <= 2.5 * refresh + 1e-9)
    }

    @Test func theFirstPictureHasAWholeVblankToBePainted() throws {
        let refresh = 1.0 / 60
        var pacer = ClipPacer(refresh: refresh)
        pacer.sawVblank(at: 10)
        // Started a millisecond before a vblank: the first picture is due at the one after it, not in 1 ms.
        pacer.start(now: 10 + refresh - 0.001)
        let due = try #require(pacer.due(0))
        #expect(abs(due - (10 + 2 * refresh)) < 1e-9)
        guard case .wait(let until) = pacer.decide(waiting: [0], now: 10 + refresh - 0.001) else {
            Issue.record("the first picture is not due yet")
            return
        }
        // Looked at again before the vblank before it, and flipped to once that vblank has passed.
        #expect(until <= 10 + refresh)
        #expect(pacer.decide(waiting: [0], now: 10 + refresh + 0.000_2) == .show(index: 0, dropping: 0))
        // Started just after a vblank (a flip's completion), the next vblank is under a whole vblank away too.
        var prompt = ClipPacer(refresh: refresh)
        prompt.sawVblank(at: 10)
        prompt.start(now: 10.001)
        #expect(abs((prompt.due(0) ?? 0) - (10 + 2 * refresh)) < 1e-9)
        // Started exactly on a vblank, the next is a whole vblank away and is the first picture's.
        var onTime = ClipPacer(refresh: refresh)
        onTime.sawVblank(at: 10)
        onTime.start(now: 10)
        #expect(abs((onTime.due(0) ?? 0) - (10 + refresh)) < 1e-9)
    }

    @Test func theGlassTimeIsTheNextVblank() {
        var pacer = ClipPacer(refresh: 0.02)
        pacer.start(now: 0)
        pacer.shown(time: 0, glass: 1.0, vblank: true)
        #expect(abs(pacer.glassTime(now: 1.005) - 1.02) < 1e-9)
        #expect(abs(pacer.glassTime(now: 1.021) - 1.04) < 1e-9)
    }
}
