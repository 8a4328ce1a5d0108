import Testing

@testable import VitrineCore

/// A mirrored screen of another size follows the show's actions: it decodes what the show decodes, shows a slide
/// when the show does (at once when its picture is ready, else the moment it is), and drops what the show drops.
/// Pictures are strings here: the follower never looks at them.
struct MirrorFollowerTests {
    typealias Follower = MirrorFollower<String>

    static func request(_ name: String, generation: Int = 1, purpose: DecodeRequest.Purpose = .prefetch)
        -> DecodeRequest
    {
        DecodeRequest(
            slide: Slide(id: SlideID(category: "c", name: name), original: name, renditions: []),
            generation: generation,
            purpose: purpose)
    }

    static func id(_ name: String) -> SlideID { SlideID(category: "c", name: name) }

    /// The actions as words, to compare in one line.
    static func words(_ actions: [Follower.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .decode(let request): return "decode \(request.slide.id.name) \(request.purpose.rawValue)"
            case .cancel(let id): return "cancel \(id.name)"
            case .show(let picture, let id): return "show \(picture) as \(id.name)"
            case .showBackground: return "background"
            case .warn(let line): return "warn \(line)"
            }
        }
    }

    @Test func aSlideDecodedAheadIsShownOnTheTurnTheShowPresentsIt() {
        var follower = Follower()
        #expect(Self.words(follower.showDecodes(Self.request("a", purpose: .show))) == ["decode a show"])
        #expect(Self.words(follower.decoded(Self.request("a", purpose: .show), "A")).isEmpty)
        #expect(follower.readySlides == [Self.id("a")])
        #expect(Self.words(follower.showPresents(Self.id("a"))) == ["show A as a"])
        #expect(follower.onScreen == Self.id("a"))
        #expect(follower.readySlides.isEmpty)
        // The show asking for the same decode again (its own decode was slow) asks nothing new here.
        #expect(Self.words(follower.showDecodes(Self.request("b"))) == ["decode b prefetch"])
        #expect(Self.words(follower.showDecodes(Self.request("b"))).isEmpty)
    }

    @Test func aLateDecodeIsShownTheMomentItIsReadyUnlessTheShowMovedOn() {
        var follower = Follower()
        _ = follower.showDecodes(Self.request("a"))
        #expect(Self.words(follower.showPresents(Self.id("a"))).isEmpty)
        #expect(follower.wanted == Self.id("a"))
        #expect(Self.words(follower.decoded(Self.request("a"), "A")) == ["show A as a"])
        #expect(follower.wanted == nil)

        // Slide b is still decoding when the show is already on c: b is given up, and c shown when it comes.
        _ = follower.showDecodes(Self.request("b"))
        _ = follower.showPresents(Self.id("b"))
        _ = follower.showDecodes(Self.request("c"))
        #expect(Self.words(follower.showPresents(Self.id("c"))) == ["cancel b"])
        #expect(Self.words(follower.decoded(Self.request("b"), "B")).isEmpty)
        #expect(Self.words(follower.decoded(Self.request("c"), "C")) == ["show C as c"])
        #expect(follower.readySlides.isEmpty)
    }

    @Test func goingBackToASlideTheShowKeptDecodesItAgainFromItsRequest() {
        var follower = Follower()
        _ = follower.showDecodes(Self.request("a"))
        _ = follower.decoded(Self.request("a"), "A")
        _ = follower.showPresents(Self.id("a"))
        _ = follower.showDecodes(Self.request("b"))
        _ = follower.decoded(Self.request("b"), "B")
        _ = follower.showPresents(Self.id("b"))
        // The show had kept a's frame and shows it without a decode: this screen asks for one, to show at once.
        #expect(Self.words(follower.showPresents(Self.id("a"))) == ["decode a show"])
        #expect(Self.words(follower.decoded(Self.request("a", purpose: .show), "A again")) == ["show A again as a"])
        // The show painting the same slide again is nothing new.
        #expect(Self.words(follower.showPresents(Self.id("a"))).isEmpty)
    }

    @Test func whatTheShowCancelsOrDropsWithAnOlderCategoryIsNotKept() {
        var follower = Follower()
        _ = follower.showDecodes(Self.request("a"))
        _ = follower.showDecodes(Self.request("b"))
        _ = follower.decoded(Self.request("a"), "A")
        #expect(Self.words(follower.showCancels(Self.id("b"))) == ["cancel b"])
        #expect(Self.words(follower.decoded(Self.request("b"), "B")).isEmpty)
        #expect(follower.readySlides == [Self.id("a")])
        // A new category (generation 2): the older pictures and decodes go.
        _ = follower.showDecodes(Self.request("x"))
        #expect(
            Self.words(follower.showDecodes(Self.request("y", generation: 2, purpose: .show)))
                == ["cancel x", "decode y show"])
        #expect(follower.readySlides.isEmpty)
        #expect(Self.words(follower.decoded(Self.request("x"), "X")).isEmpty)
        // At most two pictures wait: the show never holds more ahead.
        for name in ["p", "q", "r"] {
            _ = follower.showDecodes(Self.request(name, generation: 2))
            _ = follower.decoded(Self.request(name, generation: 2), name.uppercased())
        }
        #expect(follower.readySlides == [Self.id("q"), Self.id("r")])
    }

    @Test func aFailedDecodeKeepsThePictureOnScreenAndTheBackgroundClearsIt() {
        var follower = Follower()
        _ = follower.showDecodes(Self.request("a"))
        _ = follower.decoded(Self.request("a"), "A")
        _ = follower.showPresents(Self.id("a"))
        _ = follower.showDecodes(Self.request("b"))
        _ = follower.showPresents(Self.id("b"))
        let failed = Self.words(follower.decodeFailed(Self.request("b"), message: "b.jpg: over the budget"))
        #expect(failed == ["warn b.jpg: over the budget; this screen keeps the slide it shows"])
        #expect(follower.onScreen == Self.id("a"))
        _ = follower.showDecodes(Self.request("c"))
        _ = follower.showPresents(Self.id("c"))
        #expect(Self.words(follower.showShowsBackground()) == ["cancel c", "background"])
        #expect(follower.onScreen == nil)
    }

    @Test func aScreenRepluggedAtAnotherSizeDecodesTheSlideOnScreenAgain() {
        var follower = Follower()
        _ = follower.showDecodes(Self.request("a"))
        _ = follower.decoded(Self.request("a"), "A")
        _ = follower.showPresents(Self.id("a"))
        _ = follower.showDecodes(Self.request("b"))
        #expect(Self.words(follower.resized()) == ["cancel b", "decode a show"])
        #expect(follower.wanted == Self.id("a"))
        #expect(
            Self.words(follower.decoded(Self.request("a", purpose: .show), "A at the new size")) == [
                "show A at the new size as a"
            ])
    }
}
