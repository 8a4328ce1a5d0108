import Testing
import VitrineCore

/// A saved position (the slide on screen when the player last ran) decides where the show starts.
@Suite struct ResumeTests {
    let budget = MemoryBudget(limit: 1 << 20)

    func frame() throws -> Frame { try Frame(size: Size(width: 16, height: 16), budget: budget, purpose: "test") }

    static func text(_ actions: [Player.Action]) -> [String] { actions.map(\.description) }

    @Test func theShowResumesAtTheSavedSlideAndGoesOnFromThere() throws {
        let resume = SlideID(category: "B", name: "y")
        var player = Player(options: Player.Options(interval: 10, startCategory: "A", resume: resume))
        #expect(Self.text(player.handle(.start(categories: ["A", "B"], now: 0))) == ["index B"])
        let decode = player.handle(
            .indexed(category: "B", slides: PlayerTests.slides(["x", "y", "z"], in: "B"), now: 0))
        #expect(Self.text(decode) == ["log resuming at B/y", "decode show B/y"])
        let request = try #require(PlayerTests.requests(decode).first)
        let shown = player.handle(.decoded(request, try frame(), now: 0))
        #expect(Self.text(shown) == ["present B/y", "arm 10.0", "decode prefetch B/z"])
        #expect(player.status(now: 0).position == 2)
    }

    @Test func aSavedSlideThatIsGoneStartsItsCategoryFromTheTop() throws {
        var player = Player(options: Player.Options(resume: SlideID(category: "B", name: "gone")))
        #expect(Self.text(player.handle(.start(categories: ["A", "B"], now: 0))) == ["index B"])
        let decode = player.handle(.indexed(category: "B", slides: PlayerTests.slides(["x", "y"], in: "B"), now: 0))
        #expect(Self.text(decode) == ["decode show B/x"])
    }

    @Test func aSavedCategoryThatIsGoneGivesWayToTheStartCategoryAndIsForgotten() throws {
        var player = Player(options: Player.Options(startCategory: "A", resume: SlideID(category: "Old", name: "x")))
        #expect(Self.text(player.handle(.start(categories: ["A", "B"], now: 0))) == ["index A"])
        _ = player.handle(.indexed(category: "A", slides: PlayerTests.slides(["a"]), now: 0))
        // Later, a category named like the saved one appears: switching to it starts from its top.
        _ = player.handle(.categoriesChanged(["A", "B", "Old"], now: 1))
        let switched = player.handle(.command(.category(.named("Old")), now: 2))
        #expect(Self.text(switched).contains("index Old"))
        let decode = player.handle(
            .indexed(category: "Old", slides: PlayerTests.slides(["w", "x"], in: "Old"), now: 2))
        #expect(Self.text(decode).contains("decode show Old/w"))
    }
}

/// `shuffle` through the player: status says why, a star is given to the photo on screen (both of a pair), and a
/// restarted player takes up the round where the saved one left it.
@Suite struct PlayerSelectionTests {
    let budget = MemoryBudget(limit: 1 << 20)

    func frame() throws -> Frame { try Frame(size: Size(width: 16, height: 16), budget: budget, purpose: "test") }

    /// Shows `count` more slides, one per timer expiry.
    static func show(_ player: inout Player, _ count: Int, from start: Double = 100, frame: () throws -> Frame) throws
        -> [SlideID]
    {
        var shown: [SlideID] = []
        var now = start
        while shown.count < count {
            now += 10
            let fired = player.handle(.timerFired(generation: player.timer.generation, now: now))
            let presented = try PlayerDriver.run(&player, fired, now: now, frame: frame)
            guard !presented.isEmpty else { break }
            shown += presented
        }
        return shown
    }

    @Test func aRestartedPlayerTakesUpTheRoundAndStarsThePhotoOnScreen() throws {
        let names = (0..<40).map { "p\($0)" }
        var player = Player(options: Player.Options(interval: 10, order: .shuffle, seed: 1))
        _ = player.handle(.today(ShowDay(year: 2026, month: 12, day: 6), now: 0))
        _ = player.handle(.start(categories: ["A"], now: 0))
        let indexed = player.handle(.indexed(category: "A", slides: PlayerTests.slides(names, in: "A"), now: 0))
        var shown = try PlayerDriver.run(&player, indexed, now: 0, frame: frame)
        shown += try Self.show(&player, 14, frame: frame)
        #expect(player.status(now: 0).why == .round)
        let onScreen = try #require(player.current)
        let starred = player.handle(.command(.favourite(nil), now: 200))
        #expect(Self.text(starred).contains("log starred \(onScreen)"))
        #expect(player.favourites.starred == [onScreen])
        #expect(player.status(now: 200).favourite)
        let saved = try #require(player.playlist?.savedSelection())
        // The restart: the saved slide first, then the rest of the round, none of it seen before.
        var restarted = Player(
            options: Player.Options(interval: 10, order: .shuffle, seed: 2, resume: onScreen, resumeSelection: saved),
            favourites: player.favourites)
        _ = restarted.handle(.start(categories: ["A"], now: 0))
        let again = restarted.handle(.indexed(category: "A", slides: PlayerTests.slides(names, in: "A"), now: 0))
        #expect(try PlayerDriver.run(&restarted, again, now: 0, frame: frame) == [onScreen])
        #expect(restarted.status(now: 0).favourite)
        let rest = try Self.show(&restarted, 40 - Set(shown).count, frame: frame)
        #expect(Set(rest).isDisjoint(with: Set(shown)), "\(rest) repeats \(shown)")
        #expect(Set(shown).union(rest).count == 40)
    }

    static func text(_ actions: [Player.Action]) -> [String] { actions.map(\.description) }

    @Test func aRoundLeftForAnotherCategoryGoesOnWhenTheShowComesBack() throws {
        let library = ["A": (0..<10).map { "a\($0)" }, "B": ["b0"]]
        var player = Player(options: Player.Options(interval: 10, order: .shuffle, startCategory: "A", seed: 4))
        var shown = try PlayerDriver.run(
            &player, player.handle(.start(categories: ["A", "B"], now: 0)), now: 0, library: library, frame: frame)
        shown += try Self.show(&player, 4, frame: frame)
        _ = try PlayerDriver.run(
            &player, player.handle(.command(.category(.named("B")), now: 200)), now: 200, library: library,
            frame: frame)
        var rest = try PlayerDriver.run(
            &player, player.handle(.command(.category(.named("A")), now: 210)), now: 210, library: library,
            frame: frame)
        rest += try Self.show(&player, 4, from: 300, frame: frame)
        #expect(Set(shown).count == 5 && Set(rest).count == 5)
        #expect(Set(shown + rest).count == 10, "back in A the round goes on: \(shown) then \(rest)")
    }

    @Test func aReloadedFavouriteRatingIsTakenAtOnce() throws {
        var slides = PlayerTests.slides(["four"])
        slides[0].traits = SlideTraits(rating: 4)
        var player = Player(options: Player.Options(order: .shuffle))
        _ = player.handle(.start(categories: ["A"], now: 0))
        let indexed = player.handle(.indexed(category: "A", slides: slides, now: 0))
        #expect(try PlayerDriver.run(&player, indexed, now: 0, frame: frame).map(\.name) == ["four"])
        #expect(player.status(now: 0).favourite, "4 stars make a favourite by default")
        player.changeFavouriteRating(to: 5)
        #expect(!player.status(now: 0).favourite)
    }

    @Test func aSlideShownOnThisDayAsksItsCaptionToSayHowLongAgo() throws {
        let today = ShowDay(year: 2026, month: 12, day: 6)
        var slides = PlayerTests.slides(["then", "other"])
        slides[0].timestamp = today.wallSeconds - 3 * 365.25 * 86400
        slides[0].traits = SlideTraits(captured: true)
        slides[1].timestamp = today.wallSeconds - 100 * 86400
        slides[1].traits = SlideTraits(captured: true)
        var player = Player(
            options: Player.Options(order: .shuffle, mix: SelectionMix(onThisDay: 1)))
        _ = player.handle(.today(today, now: 0))
        _ = player.handle(.start(categories: ["A"], now: 0))
        let requests = PlayerTests.requests(player.handle(.indexed(category: "A", slides: slides, now: 0)))
        let request = try #require(requests.first)
        // The anniversary first, with its age; then the other, given to the rest since no anniversary is left.
        #expect(request.slide.id.name == "then")
        #expect(request.ages == ["3 years ago today"])
        let next = PlayerTests.requests(player.handle(.decoded(request, try frame(), now: 0)))
        #expect(next.first?.slide.id.name == "other")
        #expect(next.first?.ages == [])
    }
}
