import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineLibrary

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

@Suite struct CategoryIndexerTests {
    static func photo(taken: String?, size: Size = Size(width: 16, height: 8)) throws -> [UInt8] {
        let pixels = JPEGFixture.solid(RGBColor(red: 200, green: 180, blue: 160), size: size)
        let jpeg = try JPEGFixture.encode(rgb: pixels, size: size)
        guard let taken else { return jpeg }
        return JPEGFixture.inserting(JPEGFixture.exifSegment(orientation: 1, dateTimeOriginal: taken), into: jpeg)
    }

    /// `shuffle` reads what the selection engine weighs: the capture date (not a file time), the shape, the XMP
    /// rating, and which photos are new since the last index; it makes no pairs itself (the engine pairs as it
    /// draws). `minRating` leaves out lower-rated and unrated photos.
    @Test func shuffleNotesDatesShapesRatingsAndWhatIsNew() throws {
        let folder = try TemporaryFolder()
        let library = "\(folder.path)/library"
        let rated = JPEGFixture.inserting(
            JPEGFixture.xmpSegment(rating: 5), into: try Self.photo(taken: "2019:12:06 10:00:00"))
        try folder.write("library/c/a.jpg", rated)
        try folder.write(
            "library/c/b.jpg",
            JPEGFixture.inserting(
                JPEGFixture.xmpSegment(rating: 2), into: try Self.photo(taken: nil, size: Size(width: 8, height: 16))))
        try folder.write("library/c/c.jpg", try Self.photo(taken: nil, size: Size(width: 8, height: 16)))
        let category = LibraryCategory(name: "c", path: "\(library)/c")
        let indexer = CategoryIndexer(
            library: Library(root: library), pairPortraits: true, cacheDirectory: "\(folder.path)/cache")
        let first = try #require(try indexer.index(of: category, order: .shuffle, excluding: []))
        let catalog = first.catalog
        #expect(catalog.count == 3, "portraits are not paired at index time in shuffle")
        func traits(_ name: String, in catalog: SlideCatalog) -> SlideTraits? {
            catalog.index(of: SlideID(category: "c", name: name)).map { catalog.traits(at: $0) }
        }
        #expect(traits("a", in: catalog) == SlideTraits(captured: true, portrait: false, rating: 5))
        #expect(traits("b", in: catalog) == SlideTraits(captured: false, portrait: true, rating: 2))
        #expect(traits("c", in: catalog) == SlideTraits(captured: false, portrait: true, rating: nil))
        let a = try #require(catalog.index(of: SlideID(category: "c", name: "a")))
        #expect(catalog.timestamp(at: a) == CaptureDate.seconds(fromEXIF: "2019:12:06 10:00:00"))
        // A photo copied in while the player was away is new to the index; the others come from the cache.
        try folder.write("library/c/d.jpg", try Self.photo(taken: nil))
        let second = try #require(try indexer.index(of: category, order: .shuffle, excluding: []))
        #expect(traits("d", in: second.catalog)?.fresh == true)
        #expect(traits("a", in: second.catalog) == SlideTraits(captured: true, portrait: false, rating: 5))
        #expect(second.headersRead == 1)
        let filtered = try #require(try indexer.index(of: category, order: .name, minRating: 2, excluding: []))
        #expect(filtered.catalog.slides.map(\.id.name) == ["a", "b"])
        let top = try #require(try indexer.index(of: category, order: .shuffle, minRating: 5, excluding: []))
        #expect(top.catalog.slides.map(\.id.name) == ["a"])
    }

    /// The slides of an index in `newest` order.
    static func newest(_ index: CategoryIndexer.Index) -> [Slide] {
        Playlist(catalog: index.catalog, order: .newest).round
    }

    /// `newest` order from the capture dates; a restart reads no header of a photo that has not changed, a
    /// photo written again is read again, and a photo that went is forgotten by the cache file.
    @Test func aRestartTakesTheDatesFromTheCacheAndRereadsOnlyWhatChanged() throws {
        let folder = try TemporaryFolder()
        let library = "\(folder.path)/library"
        try folder.write("library/trip/a.jpg", try Self.photo(taken: "2021:05:01 10:00:00"))
        try folder.write("library/trip/b.jpg", try Self.photo(taken: "2023:01:01 09:00:00"))
        try folder.write("library/trip/c.jpg", try Self.photo(taken: "2022:07:14 12:00:00"))
        let category = LibraryCategory(name: "trip", path: "\(library)/trip")
        let indexer = CategoryIndexer(library: Library(root: library), cacheDirectory: "\(folder.path)/cache")

        let cold = try #require(try indexer.index(of: category, order: .newest, excluding: []))
        #expect(Self.newest(cold).map(\.id.name) == ["b", "c", "a"])
        #expect(cold.headersRead == 3)
        #expect(cold.cacheHits == 0)
        #expect(cold.cacheProblem == nil)
        let cacheFile = "\(folder.path)/cache/\(HeaderCache.fileName(for: category.path))"
        #expect(FileBytes.exists(cacheFile))

        var before = stat()
        stat(cacheFile, &before)
        let warm = try #require(try indexer.index(of: category, order: .newest, excluding: []))
        // Nothing changed: the cache file is not written again (an SD card wears with every write).
        var after = stat()
        stat(cacheFile, &after)
        #expect(after.st_ino == before.st_ino)
        #expect(after.st_mtim.tv_nsec == before.st_mtim.tv_nsec && after.st_mtim.tv_sec == before.st_mtim.tv_sec)
        #expect(Self.newest(warm).map(\.id.name) == ["b", "c", "a"])
        #expect(Self.newest(warm).map(\.timestamp) == Self.newest(cold).map(\.timestamp))
        #expect(warm.headersRead == 0)
        #expect(warm.cacheHits == 3)

        // a.jpg is written again with another date; c.jpg goes.
        try folder.write(
            "library/trip/a.jpg", try Self.photo(taken: "2024:12:24 18:00:00", size: Size(width: 8, height: 8)))
        unlink("\(library)/trip/c.jpg")
        let changed = try #require(try indexer.index(of: category, order: .newest, excluding: []))
        #expect(Self.newest(changed).map(\.id.name) == ["a", "b"])
        #expect(changed.headersRead == 1)
        #expect(changed.cacheHits == 1)
        let lines = try FileBytes.readText(cacheFile).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(!lines.contains { $0.hasSuffix("\tc.jpg") })
        let again = try #require(try indexer.index(of: category, order: .newest, excluding: []))
        #expect(again.headersRead == 0)
        #expect(again.cacheHits == 2)

        // A photo in the middle of the sorted cache changes: what comes before it is copied, the rest follows.
        try folder.write("library/trip/aa.jpg", try Self.photo(taken: "2020:01:01 00:00:00"))
        try folder.write("library/trip/b.jpg", try Self.photo(taken: "2019:01:01 00:00:00"))
        let middle = try #require(try indexer.index(of: category, order: .newest, excluding: []))
        #expect(Self.newest(middle).map(\.id.name) == ["a", "aa", "b"])
        #expect(middle.headersRead == 2)
        let last = try #require(try indexer.index(of: category, order: .newest, excluding: []))
        #expect(Self.newest(last).map(\.id.name) == ["a", "aa", "b"])
        #expect(last.headersRead == 0)
        #expect(last.cacheHits == 3)
    }

    /// A cache file that is not ours, or damaged, costs only header reads; a cache folder that cannot be made is
    /// said once, and the index is still good.
    @Test func aDamagedOrUnwritableCacheOnlyCostsHeaderReads() throws {
        let folder = try TemporaryFolder()
        let library = "\(folder.path)/library"
        try folder.write("library/p/a.jpg", try Self.photo(taken: "2021:05:01 10:00:00"))
        try folder.write("library/p/b.jpg", try Self.photo(taken: nil))
        let category = LibraryCategory(name: "p", path: "\(library)/p")
        try folder.write("cache/\(HeaderCache.fileName(for: category.path))", text: "vitrine header cache 2\n1\tx\n\n")
        let indexer = CategoryIndexer(library: Library(root: library), cacheDirectory: "\(folder.path)/cache")
        let index = try #require(try indexer.index(of: category, order: .newest, excluding: []))
        #expect(index.headersRead == 2)
        #expect(Set(Self.newest(index).map(\.id.name)) == ["a", "b"])

        try folder.write("blocker", text: "a file where the cache folder would be")
        let blocked = CategoryIndexer(library: Library(root: library), cacheDirectory: "\(folder.path)/blocker/cache")
        let unsaved = try #require(try blocked.index(of: category, order: .newest, excluding: []))
        #expect(unsaved.catalog.count == 2)
        #expect(unsaved.cacheProblem?.contains("\(folder.path)/blocker/cache") == true)
    }

    /// A cancelled index stops at its next batch of photos instead of reading every header.
    @Test func aCancelledIndexStopsWithinABatch() throws {
        let folder = try TemporaryFolder()
        let library = "\(folder.path)/library"
        let photo = try Self.photo(taken: "2021:05:01 10:00:00")
        let count = CategoryIndexer.batch * 8
        let first = try folder.write("library/big/p0.jpg", photo)
        for number in 1..<count { link(first, "\(library)/big/p\(number).jpg") }
        let category = LibraryCategory(name: "big", path: "\(library)/big")
        var questions = 0
        let indexer = CategoryIndexer(
            library: Library(root: library), cacheDirectory: nil,
            isCancelled: {
                questions += 1
                return questions > 3
            })
        #expect(try indexer.index(of: category, order: .newest, excluding: []) == nil)
        // The listing asks once, then each batch of headers once: cancelled at the third batch of eight.
        #expect(questions == 4)
    }

    @Test func aRefreshTellsWhatWasAddedReplacedAndRemoved() {
        func slide(_ name: String, _ file: String) -> Slide {
            Slide(id: SlideID(category: "c", name: name), original: file, renditions: [])
        }
        let known = [slide("a", "/c/a.jpg"), slide("b", "/c/b.jpg"), slide("c", "/c/c.jpg")]
        let current = [slide("a", "/c/a.jpg"), slide("b", "/c/b.jpeg"), slide("c", "/c/c.jpg"), slide("d", "/c/d.jpg")]
        let refresh = IndexWorker.Refresh(
            known: SlideCatalog(known, folder: "/c"), finished: ["/c/c.jpg"], treeReplaced: false)
        let changes = IndexWorker.changes(from: refresh, to: SlideCatalog(current, folder: "/c"))
        #expect(changes.added.map(\.id.name) == ["b", "c", "d"])
        #expect(changes.removed.isEmpty)
        let gone = IndexWorker.changes(from: refresh, to: SlideCatalog([slide("a", "/c/a.jpg")], folder: "/c"))
        #expect(gone.added.isEmpty)
        #expect(gone.removed.map(\.name) == ["b", "c"])
        let replaced = IndexWorker.changes(
            from: IndexWorker.Refresh(known: SlideCatalog(known, folder: "/c"), finished: [], treeReplaced: true),
            to: SlideCatalog(known, folder: "/c"))
        #expect(replaced.added.count == 3)
    }
}
