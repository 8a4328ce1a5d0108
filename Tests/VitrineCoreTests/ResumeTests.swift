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
