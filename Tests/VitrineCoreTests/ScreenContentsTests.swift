import Testing

@testable import VitrineCore

@Suite struct ScreenContentsTests {
    /// Each test's own, so what one holds is not counted in another's.
    let budget = MemoryBudget(limit: 64 << 20)
    static let a = PresentRecord(category: "A", slide: "a", file: nil, decodeMilliseconds: nil)
    static let b = PresentRecord(category: "A", slide: "b", file: nil, decodeMilliseconds: nil)

    func frame(_ width: Int = 8, _ height: Int = 4) throws -> Frame {
        try Frame(size: Size(width: width, height: height), budget: budget, purpose: "test")
    }

    static func request(_ name: String, _ purpose: DecodeRequest.Purpose) -> DecodeRequest {
        DecodeRequest(
            slide: Slide(id: SlideID(category: "A", name: name), original: "/lib/A/\(name).jpg", renditions: []),
            generation: 1, purpose: purpose)
    }

    /// The incoming slide's share of a step, or 256 for the slide itself.
    static func weight(_ step: ScreenContents.Step?) -> Int? {
        switch step {
        case .blend(_, _, let weight, _): return weight
        case .slide: return Crossfade.fullWeight
        case nil: return nil
        }
    }

    @Test func withFadesOffEachSlideIsACutAndItsFrameIsNotKeptByTheScreen() throws {
        var screen = ScreenContents(bufferCount: 2, fadeSeconds: nil)
        var first: Frame? = try frame()
        let cut = screen.present(try #require(first), Self.a, screenCanFade: true, now: 0)
        if case .slide(let shown, let record) = cut {
            #expect(shown === first && record == Self.a)
        } else {
            Issue.record("a cut expected")
        }
        #expect(screen.slide == Self.a && screen.slideFrame === first)
        let second = try frame()
        guard case .slide = screen.present(second, Self.b, screenCanFade: true, now: 5) else {
            Issue.record("a cut expected with fades off")
            return
        }
        #expect(!screen.isFading)
        // The player lets the old slide go: the screen does not hold its memory.
        _ = consume cut
        first = nil
        #expect(screen.slideFrame === second)
        #expect(budget.used == second.byteCount)
    }

    @Test func aFadeRunsFromTheSlideOnScreenToTheNewOneOnTheClockAndEndsWithTheNewSlide() throws {
        var screen = ScreenContents(bufferCount: 2, fadeSeconds: 1)
        let first = try frame()
        let second = try frame()
        // Nothing on screen to fade from: the first slide is a cut.
        guard case .slide = screen.present(first, Self.a, screenCanFade: true, now: 0) else {
            Issue.record("the first slide cuts")
            return
        }
        let step = screen.present(second, Self.b, screenCanFade: true, now: 10)
        guard case .blend(let from, let to, let weight, let record) = step else {
            Issue.record("a fade step expected, got \(String(describing: step))")
            return
        }
        #expect(from === first && to === second && record == Self.b)
        // Painted at 10, seen a frame later: 1/60 of the way.
        #expect(weight == 4)
        #expect(screen.isFading && screen.wantsFadeStep)
        let half = screen.nextFadeStep(now: 10.5)
        #expect(Self.weight(half) == 132)
        // A step painted while another flips reaches the glass two frames on.
        let ahead = screen.nextFadeStep(now: 10.7, vblanksAhead: 2)
        #expect(Self.weight(ahead) == 187)
        // Late: the fade ends on time with the new slide itself, however few steps were shown.
        guard case .slide(let last, _) = screen.nextFadeStep(now: 11.2) else {
            Issue.record("the last step is the slide")
            return
        }
        #expect(last === second)
        let after = screen.nextFadeStep(now: 11.3)
        #expect(!screen.wantsFadeStep && after == nil)
        #expect(screen.isFading)
        let released = screen.slideDone(visible: true, sequence: nil)
        #expect(released.isEmpty)
        #expect(!screen.isFading)
    }

    @Test func prefetchesWaitWhileAClipStartsAndGoOnceNoFadeRuns() throws {
        var screen = ScreenContents(bufferCount: 2, fadeSeconds: 1)
        let waits = [
            screen.deferPrefetch(Self.request("c", .prefetch), clipStarting: true),
            screen.deferPrefetch(Self.request("e", .show), clipStarting: true),
        ]
        #expect(waits == [true, false])
        // A fade into the next slide: nothing goes while it runs, and its end hands back what waited.
        _ = screen.present(try frame(), Self.a, screenCanFade: true, now: 0)
        _ = screen.present(try frame(), Self.b, screenCanFade: true, now: 1)
        let duringFade = screen.releaseDeferred()
        #expect(duringFade.isEmpty)
        let fadeOver = screen.slideDone(visible: true, sequence: nil)
        #expect(fadeOver.map(\.slide.id.name) == ["c"])
        let held = screen.deferPrefetch(Self.request("d", .prefetch), clipStarting: true)
        #expect(held)
        let settled = screen.releaseDeferred()
        #expect(settled.map(\.slide.id.name) == ["d"])
        let again = screen.releaseDeferred()
        #expect(again.isEmpty)
    }

    @Test func aHurriedFadeEndsAtTheNextStep() throws {
        var screen = ScreenContents(bufferCount: 2, fadeSeconds: 2)
        _ = screen.present(try frame(), Self.a, screenCanFade: true, now: 0)
        _ = screen.present(try frame(), Self.b, screenCanFade: true, now: 1)
        screen.hurryFade()
        let step = screen.nextFadeStep(now: 1.1)
        #expect(Self.weight(step) == Crossfade.fullWeight)
    }

    @Test func noFadeWhenTheScreenCannotShowOneOrTheSizeChanged() throws {
        var screen = ScreenContents(bufferCount: 2, fadeSeconds: 1)
        _ = screen.present(try frame(), Self.a, screenCanFade: true, now: 0)
        guard case .slide = screen.present(try frame(), Self.b, screenCanFade: false, now: 1) else {
            Issue.record("a dark screen cuts")
            return
        }
        // A replug to another mode: the frame on screen was made for the old size.
        guard case .slide = screen.present(try frame(16, 9), Self.a, screenCanFade: true, now: 2) else {
            Issue.record("frames of two sizes cut")
            return
        }
        #expect(!screen.isFading)
    }

    @Test func turningFadesOffLetsTheKeptFrameGo() throws {
        var screen = ScreenContents(bufferCount: 2, fadeSeconds: 1)
        var kept: Frame? = try frame()
        _ = screen.present(try #require(kept), Self.a, screenCanFade: true, now: 0)
        kept = nil
        // Kept for the next fade.
        #expect(screen.slideFrame != nil)
        screen.fadeSeconds = nil
        #expect(screen.slideFrame == nil)
        #expect(budget.used == 0)
    }

    @Test func prefetchesWaitForTheFadeAndASlideTheViewerAskedForDoesNot() throws {
        var screen = ScreenContents(bufferCount: 2, fadeSeconds: 1)
        let beforeFade = screen.deferPrefetch(Self.request("c", .prefetch))
        #expect(!beforeFade)
        _ = screen.present(try frame(), Self.a, screenCanFade: true, now: 0)
        _ = screen.present(try frame(), Self.b, screenCanFade: true, now: 1)
        let waits = [
            screen.deferPrefetch(Self.request("c", .prefetch)), screen.deferPrefetch(Self.request("d", .prefetch)),
            screen.deferPrefetch(Self.request("e", .show)),
        ]
        #expect(waits == [true, true, false])
        screen.cancelDeferred(SlideID(category: "A", name: "d"))
        // Asked again: once only.
        let again = screen.deferPrefetch(Self.request("c", .prefetch))
        #expect(again)
        screen.fadeStepDone(visible: true, sequence: 100, now: 1.02)
        screen.fadeStepDone(visible: true, sequence: 101, now: 1.03)
        #expect(screen.firstShown == 1.02)
        let released = screen.slideDone(visible: true, sequence: 104)
        #expect(released.map(\.slide.id.name) == ["c"])
        // Three steps shown (two blends and the slide) over four vblanks.
        #expect(screen.lastPacing?.steps == 3 && screen.lastPacing?.vblanks == 4)
    }

    @Test func eachBufferSaysWhichPictureItHoldsAndWhereTextChangedIt() {
        var screen = ScreenContents(bufferCount: 2, fadeSeconds: nil)
        #expect(screen.picture(in: 0) == nil && screen.picture(in: 5) == nil)
        screen.painted(.slide(Self.a), into: 0)
        let corner = Placement.Rect(x: 0, y: 0, width: 10, height: 10)
        screen.overlayPainted(into: 1, from: 0, touched: [corner])
        #expect(screen.picture(in: 1) == .slide(Self.a))
        // Back to buffer 0 for the next minute: only the corner differs.
        #expect(screen.damage.rectsToCopy(into: 0, from: 1) == [corner])
        screen.pixelsLost()
        #expect(screen.damage.rectsToCopy(into: 0, from: 1) == nil)
        #expect(screen.picture(in: 1) == .slide(Self.a))
        screen.painted(.blend(Self.b, weight: 30), into: 0)
        #expect(screen.picture(in: 0) == .blend(Self.b, weight: 30))
        screen.buffersRebuilt(count: 3)
        #expect(screen.pictures == [nil, nil, nil])
    }
}
