import Testing
import VitrineCore

/// Photos arrive and leave in batches (an rsync, a folder deleted): one pass over the round for the whole batch,
/// with the order and the slide on screen kept.
@Suite struct PlaylistBatchTests {
    static func slide(_ name: String, timestamp: Double = 0) -> Slide {
        Slide(
            id: SlideID(category: "c", name: name), original: "/lib/c/\(name).jpg", renditions: [],
            timestamp: timestamp)
    }

    static func names(_ playlist: Playlist) -> [String] { playlist.round.map(\.id.name) }

    @Test func aThousandArrivalsJoinInNameOrderAndTheNextSlideIsTheOneAfterTheScreen() {
        let odd = stride(from: 1, to: 2000, by: 2).map { "p\($0)" }
        var playlist = Playlist(slides: odd.map { Self.slide($0) }, order: .name)
        let onScreen = SlideID(category: "c", name: "p501")
        playlist.moveTo(onScreen)
        let even = stride(from: 0, to: 2000, by: 2).map { "p\($0)" }
        playlist.add(even.shuffled().map { Self.slide($0) })
        #expect(Self.names(playlist) == (0..<2000).map { "p\($0)" })
        #expect(playlist.number(of: onScreen) == 502)
        #expect(playlist.next() == SlideID(category: "c", name: "p502"))
    }

    @Test func aReplacedPhotoWithANewDateMovesInNewestOrder() {
        let slides = (0..<5).map { Self.slide("p\($0)", timestamp: Double(100 - $0)) }
        var playlist = Playlist(slides: slides, order: .newest)
        #expect(Self.names(playlist) == ["p0", "p1", "p2", "p3", "p4"])
        playlist.moveTo(SlideID(category: "c", name: "p1"))
        playlist.add([Self.slide("p3", timestamp: 200), Self.slide("p9", timestamp: 97.5)])
        #expect(Self.names(playlist) == ["p3", "p0", "p1", "p2", "p9", "p4"])
        #expect(playlist.count == 6)
        #expect(playlist.next() == SlideID(category: "c", name: "p2"))
    }

    @Test func removingABatchWithTheSlideOnScreenGoesOnWithTheOneAfterIt() {
        var playlist = Playlist(slides: (0..<10).map { Self.slide("p\($0)") }, order: .name)
        playlist.moveTo(SlideID(category: "c", name: "p5"))
        let gone = Set(["p1", "p3", "p5", "p6"].map { SlideID(category: "c", name: $0) })
        playlist.remove(gone)
        #expect(Self.names(playlist) == ["p0", "p2", "p4", "p7", "p8", "p9"])
        #expect(playlist.next() == SlideID(category: "c", name: "p7"))
    }
}
