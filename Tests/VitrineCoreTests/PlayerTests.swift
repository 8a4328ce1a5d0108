import Testing
import VitrineCore

/// The player driven by hand with a manual clock: each test feeds events and checks the actions.
@Suite struct PlayerTests {
    let budget = MemoryBudget(limit: 1 << 20)

    static func slide(_ name: String, in category: String = "A") -> Slide {
        Slide(id: SlideID(category: category, name: name), original: "/lib/\(category)/\(name).jpg", renditions: [])
    }

    static func slides(_ names: [String], in category: String = "A") -> [Slide] {
        names.map { slide($0, in: category) }
    }

    func frame() throws -> Frame { try Frame(size: Size(width: 16, height: 16), budget: budget, purpose: "test") }

    /// Descriptions of the actions, the easiest form to compare.
    static func text(_ actions: [Player.Action]) -> [String] { actions.map(\.description) }

    static func requests(_ actions: [Player.Action]) -> [DecodeRequest] {
        actions.compactMap { if case .decode(let request) = $0 { return request } else { return nil } }
    }

    /// A player showing `A/a` at t=0 with `A/b` being prefetched.
    func started(_ names: [String] = ["a", "b", "c"], interval: Double = 10) throws -> (Player, DecodeRequest) {
        var player = Player(options: Player.Options(interval: interval))
        #expect(Self.text(player.handle(.start(categories: ["A", "B"], now: 0))) == ["index A"])
        let decode = player.handle(.indexed(category: "A", slides: Self.slides(names), now: 0))
        #expect(Self.text(decode) == ["decode show A/a"])
        let request = try #require(Self.requests(decode).first)
        let shown = player.handle(.decoded(request, try frame(), now: 0))
        #expect(Self.text(shown) == ["present A/\(names[0])", "arm \(interval)", "decode prefetch A/\(names[1])"])
        let prefetch = try #require(Self.requests(shown).first)
        return (player, prefetch)
    }

    func armedGeneration(_ actions: [Player.Action]) -> Int? {
        for action in actions { if case .timer(.arm(_, let generation)) = action { return generation } }
        return nil
    }

    @Test func showsTheFirstSlideThenThePrefetchedOneWhenTheTimerFires() throws {
        var (player, prefetch) = try started()
        let generation = player.timer.generation
        #expect(Self.text(player.handle(.decoded(prefetch, try frame(), now: 1))).isEmpty)
        #expect(player.cachedFrames == 1)
        #expect(Self.text(player.handle(.flipDone(now: 0.016))).isEmpty)
        let advance = player.handle(.timerFired(generation: generation, now: 10))
        #expect(Self.text(advance) == ["present A/b", "arm 20.0", "decode prefetch A/c"])
        #expect(player.current == SlideID(category: "A", name: "b"))
    }

    @Test func pauseAndResumeKeepTheTimeLeft() throws {
        var (player, _) = try started()
        #expect(Self.text(player.handle(.hold(.user, now: 4))) == ["disarm"])
        #expect(player.timer.secondsLeft(now: 50) == 6)
        #expect(Self.text(player.handle(.release(.user, now: 100))) == ["arm 106.0"])
    }

    @Test func nestedPausesResumeOnlyWhenAllAreGone() throws {
        var (player, _) = try started()
        #expect(Self.text(player.handle(.hold(.user, now: 2))) == ["disarm"])
        #expect(Self.text(player.handle(.hold(.suspend, now: 3))).isEmpty)
        #expect(Self.text(player.handle(.hold(.screenOff, now: 4))).isEmpty)
        #expect(Self.text(player.handle(.release(.suspend, now: 5))).isEmpty)
        #expect(Self.text(player.handle(.release(.user, now: 6))).isEmpty)
        #expect(player.timer.reasons == [.screenOff])
        #expect(Self.text(player.handle(.release(.screenOff, now: 7))) == ["arm 15.0"])
        #expect(Self.text(player.handle(.release(.screenOff, now: 8))).isEmpty)
    }

    @Test func aStaleExpirationNeverAdvances() throws {
        var (player, prefetch) = try started()
        _ = player.handle(.decoded(prefetch, try frame(), now: 1))
        _ = player.handle(.flipDone(now: 1))
        let first = player.timer.generation
        _ = player.handle(.hold(.suspend, now: 5))
        let resumed = player.handle(.release(.suspend, now: 500))
        #expect(Self.text(resumed) == ["arm 505.0"])
        // The deadline armed before the pause fires late: it must not advance.
        #expect(Self.text(player.handle(.timerFired(generation: first, now: 10))).isEmpty)
        #expect(player.current?.name == "a")
        let current = try #require(armedGeneration(resumed))
        #expect(Self.text(player.handle(.timerFired(generation: current, now: 505))).first == "present A/b")
        // The same expiration delivered twice advances once.
        #expect(Self.text(player.handle(.timerFired(generation: current, now: 505))).isEmpty)
        #expect(player.current?.name == "b")
    }

    @Test func afterSleepTheSlideGetsAFullIntervalAndNoCatchUp() throws {
        var (player, _) = try started()
        let before = player.timer.generation
        let woke = player.handle(.woke(now: 8))
        #expect(Self.text(woke).last == "arm 18.0")
        #expect(Self.text(player.handle(.timerFired(generation: before, now: 10))).isEmpty)
        #expect(player.current?.name == "a")
    }

    @Test func nextWhilePrefetchingSharesTheDecode() throws {
        var (player, prefetch) = try started()
        _ = player.handle(.flipDone(now: 0.016))
        let next = player.handle(.command(.next, now: 3))
        #expect(Self.text(next) == ["disarm"])
        #expect(player.decodesInFlight == [SlideID(category: "A", name: "b")])
        #expect(
            Self.text(player.handle(.decoded(prefetch, try frame(), now: 4))).prefix(2) == ["present A/b", "arm 14.0"])
    }

    @Test func aCategorySwitchCancelsDecodesDropsFramesAndIgnoresLateResults() throws {
        var (player, prefetch) = try started(["a", "b", "c", "d"])
        let baseline = budget.used
        var prefetched: Frame? = try frame()
        if let prefetched { _ = player.handle(.decoded(prefetch, prefetched, now: 1)) }
        prefetched = nil
        #expect(budget.used > baseline)
        _ = player.handle(.flipDone(now: 1))
        _ = player.handle(.command(.next, now: 2))
        let third = try #require(player.decodesInFlight.first)
        #expect(third.name == "c")
        let switched = player.handle(.command(.category(.next), now: 3))
        #expect(Self.text(switched) == ["log category \"B\"", "cancel A/c", "disarm", "index B"])
        #expect(player.cachedFrames == 0)
        #expect(player.decodesInFlight.isEmpty)
        // The frames of the old category are gone: the budget is back where it was with one frame on screen.
        #expect(budget.used <= baseline)
        let late = DecodeRequest(slide: Self.slide("c"), generation: 1, purpose: .prefetch)
        #expect(Self.text(player.handle(.decoded(late, try frame(), now: 4))).isEmpty)
        #expect(budget.used <= baseline)
        // The old picture stays until the new category's first slide is ready.
        #expect(player.current?.name == "b")
        let index = player.handle(.indexed(category: "B", slides: Self.slides(["x"], in: "B"), now: 5))
        #expect(Self.text(index) == ["decode show B/x"])
    }

    @Test func aBrokenPhotoIsSkippedWithOneLogLine() throws {
        var (player, prefetch) = try started()
        _ = player.handle(.flipDone(now: 0))
        let failed = player.handle(.decodeFailed(prefetch, message: "/lib/A/b.jpg: empty file (0 bytes)", now: 1))
        #expect(Self.text(failed) == ["warn skipped /lib/A/b.jpg: empty file (0 bytes)", "decode prefetch A/c"])
        let prefetchC = try #require(Self.requests(failed).first)
        _ = player.handle(.decoded(prefetchC, try frame(), now: 2))
        let advance = player.handle(.timerFired(generation: player.timer.generation, now: 10))
        #expect(Self.text(advance).first == "present A/c")
        // Round two skips the broken photo too: "a" was prefetched when "c" went up, so nothing new is asked.
        let again = player.handle(.timerFired(generation: player.timer.generation, now: 20))
        #expect(Self.text(again).isEmpty)
        #expect(player.wanted?.name == "a")
        #expect(player.decodesInFlight.map(\.name) == ["a"])
    }

    @Test func theCurrentPictureStaysUntilTheNextIsDecoded() throws {
        var (player, _) = try started()
        _ = player.handle(.flipDone(now: 0))
        _ = player.handle(.command(.category(.named("B")), now: 1))
        _ = player.handle(.indexed(category: "B", slides: Self.slides(["x", "y"], in: "B"), now: 1))
        #expect(player.current?.name == "a")
        #expect(player.timer.reasons == [.loading])
    }

    @Test func anEmptyCategoryShowsTheBackgroundAndWaitsForPhotos() throws {
        var player = Player(options: Player.Options())
        _ = player.handle(.start(categories: ["A"], now: 0))
        let empty = player.handle(.indexed(category: "A", slides: [], now: 0))
        #expect(Self.text(empty) == ["background", "log category \"A\" has no photos; waiting for some to arrive"])
        let arrived = player.handle(.photosAdded([Self.slide("new")], category: "A", now: 5))
        #expect(Self.text(arrived) == ["decode show A/new"])
    }

    @Test func oneFlipAtATime() throws {
        var (player, prefetch) = try started()
        _ = player.handle(.decoded(prefetch, try frame(), now: 1))
        // The first flip has not completed; the next present waits for it.
        let next = player.handle(.command(.next, now: 2))
        #expect(!Self.text(next).contains("present A/b"))
        #expect(Self.text(player.handle(.flipDone(now: 2.01))) == ["present A/b"])
    }

    @Test func photosComeAndGoWithoutJumping() throws {
        var (player, prefetch) = try started(["a", "c", "e"])
        _ = player.handle(.flipDone(now: 0))
        #expect(prefetch.slide.id.name == "c")
        // "b" sorts between the one on screen and the prefetched one: it becomes the next.
        let added = player.handle(.photosAdded([Self.slide("b")], category: "A", now: 1))
        #expect(Self.text(added) == ["decode prefetch A/b", "cancel A/c"])
        let removed = player.handle(.photosRemoved([SlideID(category: "A", name: "b")], category: "A", now: 2))
        #expect(Self.text(removed) == ["cancel A/b", "decode prefetch A/c"])
        // Deleting the slide on screen keeps its picture; the show goes on from where it stood.
        _ = player.handle(.photosRemoved([SlideID(category: "A", name: "a")], category: "A", now: 3))
        #expect(player.current?.name == "a")
        #expect(player.decodesInFlight.map(\.name) == ["c"])
    }

    @Test func aDeletedCategoryFolderSwitchesToAnother() throws {
        var (player, _) = try started()
        let changed = player.handle(.categoriesChanged(["B"], now: 1))
        #expect(
            Self.text(changed) == [
                "log category \"A\" is gone", "log category \"B\"", "cancel A/b", "disarm", "index B",
            ])
    }

    @Test func shuffleShowsEverySlideOncePerRoundWithoutAnImmediateRepeat() {
        let names = (0..<7).map { "s\($0)" }
        var playlist = Playlist(slides: Self.slides(names), order: .shuffle, seed: 42)
        var shown: [String] = []
        var current = playlist.first()
        for _ in 0..<(names.count * 5) {
            guard let id = current else { break }
            playlist.moveTo(id)
            shown.append(id.name)
            current = playlist.next()
        }
        for round in 0..<5 {
            let slice = shown[(round * names.count)..<((round + 1) * names.count)]
            #expect(Set(slice) == Set(names), "round \(round): \(slice)")
        }
        for index in 1..<shown.count { #expect(shown[index] != shown[index - 1]) }
        #expect(shown[0..<7] != shown[7..<14])
    }

    @Test func newestOrderSortsByTimestamp() {
        var slides = Self.slides(["old", "new", "mid"])
        slides[0].timestamp = 100
        slides[1].timestamp = 300
        slides[2].timestamp = 200
        let playlist = Playlist(slides: slides, order: .newest)
        #expect(playlist.round.map(\.id.name) == ["new", "mid", "old"])
    }

    @Test func controlCommandsParse() {
        #expect(ControlCommand.parse("next") == .next)
        #expect(ControlCommand.parse("  prev \r") == .previous)
        #expect(ControlCommand.parse("category Family Trips") == .category(.named("Family Trips")))
        #expect(ControlCommand.parse("category next") == .category(.next))
        #expect(ControlCommand.parse("category") == nil)
        #expect(ControlCommand.parse("nextt") == nil)
        #expect(ControlCommand.parse("status now") == nil)
    }
}

@Suite struct CaptureDateTests {
    @Test func exifDatesOrderLikeTime() {
        #expect(CaptureDate.seconds(fromEXIF: "1970:01:01 00:00:00") == 0)
        #expect(CaptureDate.seconds(fromEXIF: "2000:03:01 12:30:15") == 951_913_815)
        #expect(CaptureDate.seconds(fromEXIF: "2024:02:29 23:59:59") == 1_709_251_199)
        #expect(CaptureDate.seconds(fromEXIF: "0000:00:00 00:00:00") == nil)
        #expect(CaptureDate.seconds(fromEXIF: "2024:13:01 00:00:00") == nil)
        #expect(CaptureDate.seconds(fromEXIF: "yesterday") == nil)
    }
}

@Suite struct ScreenPowerTests {
    /// A player showing `A/a` since t=0 with an interval of 10 s.
    func showing() throws -> Player {
        var player = Player(options: Player.Options(interval: 10))
        _ = player.handle(.start(categories: ["A"], now: 0))
        let request = try #require(
            PlayerTests.requests(
                player.handle(.indexed(category: "A", slides: PlayerTests.slides(["a", "b"]), now: 0))
            )
            .first)
        let budget = MemoryBudget(limit: 1 << 20)
        _ = player.handle(
            .decoded(request, try Frame(size: Size(width: 4, height: 4), budget: budget, purpose: "t"), now: 0))
        return player
    }

    @Test func screenOffBlanksAndHoldsTheTimerOnBringsBothBack() throws {
        var player = try showing()
        let off = player.handle(.command(.screen(on: false), now: 3))
        #expect(PlayerTests.text(off) == ["screen off", "log screen off", "disarm"])
        #expect(PlayerTests.text(player.handle(.command(.screen(on: false), now: 4))).isEmpty)
        let on = player.handle(.command(.screen(on: true), now: 100))
        #expect(PlayerTests.text(on) == ["screen on", "log screen on", "arm 107.0"])
    }

    /// A TV that drops hotplug in standby during off hours: its replug does not start the show at night, and the
    /// morning's `screen on` is not ignored.
    @Test func anUnplugDuringOffHoursThenTheMorning() throws {
        var player = try showing()
        #expect(PlayerTests.text(player.handle(.command(.screen(on: false), now: 1))).contains("screen off"))
        _ = player.handle(.hold(.unplugged, now: 2))
        #expect(PlayerTests.text(player.handle(.release(.unplugged, now: 3))).isEmpty, "the night holds")
        #expect(player.timer.reasons == [.screenOff])
        let morning = player.handle(.command(.screen(on: true), now: 100))
        #expect(PlayerTests.text(morning) == ["screen on", "log screen on", "arm 109.0"])
        // Unplugged during the day: the schedule's evening still turns the screen off, and the replug does not
        // start the show while the schedule holds it.
        _ = player.handle(.hold(.unplugged, now: 200))
        #expect(PlayerTests.text(player.handle(.command(.screen(on: false), now: 300))).contains("screen off"))
        #expect(PlayerTests.text(player.handle(.release(.unplugged, now: 301))).isEmpty)
        #expect(player.timer.reasons == [.screenOff])
    }

    @Test func schedulesCrossingMidnight() throws {
        let night = ScreenSchedule(
            off: try #require(ScreenSchedule.TimeOfDay(parsing: "22:30")), on: try #require(.init(parsing: "07:00")))
        #expect(night.isOn(atMinute: 12 * 60))
        #expect(!night.isOn(atMinute: 23 * 60))
        #expect(!night.isOn(atMinute: 3 * 60))
        #expect(night.isOn(atMinute: 7 * 60))
        #expect(!night.isOn(atMinute: 22 * 60 + 30))
        #expect(night.minutesUntilChange(fromMinute: 22 * 60) == 30)
        #expect(night.minutesUntilChange(fromMinute: 23 * 60) == 8 * 60)
        let lunch = ScreenSchedule(off: .init(hour: 12, minute: 0), on: .init(hour: 13, minute: 0))
        #expect(!lunch.isOn(atMinute: 12 * 60 + 30))
        #expect(lunch.isOn(atMinute: 13 * 60))
        #expect(ScreenSchedule.TimeOfDay(parsing: "24:00") == nil)
        #expect(ScreenSchedule.TimeOfDay(parsing: "7:5") == .init(hour: 7, minute: 5))
        #expect(ScreenSchedule.TimeOfDay(parsing: "07:00:00") == nil)
    }

    @Test func theScheduleIsReadAndChecked() throws {
        let settings = try Settings.parse(
            "{\"screenSchedule\": {\"off\": \"23:00\", \"on\": \"06:30\"}}", file: "v.json")
        #expect(settings.screenSchedule?.off.description == "23:00")
        #expect {
            _ = try Settings.parse("{\"screenSchedule\": {\"off\": \"late\", \"on\": \"06:30\"}}", file: "v.json")
        } throws: { error in
            (error as? ConfigError)?.path == "screenSchedule.off"
        }
        #expect(ControlCommand.parse("screen off") == .screen(on: false))
        #expect(ControlCommand.parse("screen dim") == nil)
    }
}

@Suite struct RedrawTests {
    @Test func aNewScreenSizeDropsOldFramesAndMakesTheSlideAgain() throws {
        var (player, prefetch) = try PlayerTests().started()
        _ = player.handle(.flipDone(now: 0))
        let redraw = player.handle(.redraw(now: 5))
        #expect(PlayerTests.text(redraw) == ["cancel A/b", "disarm", "decode show A/a"])
        // The prefetch made for the old size is dropped when it arrives.
        let budget = MemoryBudget(limit: 1 << 20)
        #expect(
            PlayerTests.text(
                player.handle(
                    .decoded(prefetch, try Frame(size: Size(width: 4, height: 4), budget: budget, purpose: "t"), now: 6)
                )
            )
            .isEmpty)
        #expect(player.cachedFrames == 0)
    }
}
