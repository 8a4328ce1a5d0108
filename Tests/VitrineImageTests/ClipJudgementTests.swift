import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineImage

/// The player's judgement of a clip before it is shown. `burst.mp4` (Tests/Fixtures/clips/burst) says it runs at a
/// million pictures a second, which no board decodes at half of, so it is too slow everywhere; its rendition
/// `burst@160x90.mp4` runs at 30.
@Suite struct ClipJudgementTests {
    static let folder = ClipImageTests.fixtures + "/burst"
    let budget = MemoryBudget(limit: 256 << 20)

    var playerOptions: RenderOptions {
        var options = RenderOptions(canvas: Size(width: 320, height: 240))
        options.clipDecoding = .software
        return options
    }

    @Test func aClipTheBoardCannotDecodeAtHalfItsRateIsRefusedWithOneLineSayingWhy() throws {
        let renderer = FrameRenderer(budget: budget)
        let path = "\(Self.folder)/burst.mp4"
        for attempt in 0..<2 {
            // The second time the verdict is remembered: the same refusal, without timing the clip again.
            let error = #expect(throws: ImageError.self) { try renderer.render(path, options: playerOptions) }
            let text = error.map { "\($0)" } ?? ""
            guard case .tooSlow = error?.reason else {
                Issue.record("attempt \(attempt): \(text)")
                continue
            }
            #expect(
                text.hasPrefix(path + ": too slow to play on this board: this H.264 320x180 1000000 fps clip"),
                "\(text)")
            #expect(text.contains("pictures a second in software"), "\(text)")
            #expect(text.contains("vitrine renditions"), "\(text)")
        }
        // The same clip as a still alone (a thumbnail, the web remote's picture) is its first picture.
        let (frame, plan) = try renderer.render(path, options: RenderOptions(canvas: Size(width: 320, height: 240)))
        #expect(ClipImageTests.counter(frame, box: plan.placement.destination) == 0)
    }

    @Test func aClipTheBoardKeepsUpWithIsShownAsItsFirstPicture() throws {
        let renderer = FrameRenderer(budget: budget)
        let (frame, plan) = try renderer.render("\(Self.folder)/burst@160x90.mp4", options: playerOptions)
        #expect(ClipImageTests.counter(frame, box: plan.placement.destination) == 0)
    }

    @Test func aClipTooSlowForTheBoardPlaysFromASmallerCopy() throws {
        // The rendition is smaller than the screen, so the original is picked first; judged too slow, the slide
        // comes from the rendition, and that is the file the clip plays from.
        let slide = Slide(
            id: SlideID(category: "Shop", name: "burst"), original: "\(Self.folder)/burst.mp4",
            renditions: [
                Slide.Rendition(path: "\(Self.folder)/burst@160x90.mp4", size: Size(width: 160, height: 90))
            ])
        let rendered = try SlideRenderer(budget: budget).render(slide, options: playerOptions)
        #expect(rendered.files == ["\(Self.folder)/burst@160x90.mp4"])
        #expect(ClipImageTests.counter(rendered.frame, box: rendered.plans[0].placement.destination) == 0)
        // Without a smaller copy the slide is refused, naming the original.
        let alone = Slide(
            id: SlideID(category: "Shop", name: "burst"), original: "\(Self.folder)/burst.mp4", renditions: [])
        let error = #expect(throws: ImageError.self) {
            try SlideRenderer(budget: budget).render(alone, options: playerOptions)
        }
        #expect(error?.file == "\(Self.folder)/burst.mp4")
    }
}
