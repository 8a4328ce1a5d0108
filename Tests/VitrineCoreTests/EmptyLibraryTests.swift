import Testing
import VitrineCore

/// A library that is empty, or whose folder went away, starts playing as soon as photos are there again.
@Suite struct EmptyLibraryTests {
    @Test func anEmptyLibraryStartsWhenACategoryAppears() {
        var player = Player(options: Player.Options(startCategory: "B"))
        #expect(
            ResumeTests.text(player.handle(.start(categories: [], now: 0)))
                == ["background", "log the library has no photos yet; waiting for some to arrive"])
        #expect(
            ResumeTests.text(player.handle(.categoriesChanged(["A", "B"], now: 5)))
                == ["log photos arrived; starting with \"B\"", "index B"])
    }

    @Test func aLibraryThatEmptiedStartsAgainWhenItsFolderIsBack() {
        var player = Player(options: Player.Options())
        #expect(ResumeTests.text(player.handle(.start(categories: ["A"], now: 0))) == ["index A"])
        _ = player.handle(.indexed(category: "A", slides: PlayerTests.slides(["a"]), now: 0))
        #expect(
            ResumeTests.text(player.handle(.categoriesChanged([], now: 1))).contains(
                "log the library has no photos left"))
        #expect(player.active == nil)
        #expect(ResumeTests.text(player.handle(.categoriesChanged(["A"], now: 2))).contains("index A"))
    }
}
