import Testing
import VitrineTestSupport

@testable import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The packed catalog must give back exactly the slides a plain list would: names, files, order, renditions and
/// pairs, replacement and removal, with indices that stay put until compaction.
@Suite struct SlideCatalogTests {
    static let folder = "/lib/Trip"

    static func plain(_ name: String, tail: String = ".jpg", timestamp: Double = 0) -> Slide {
        Slide(
            id: SlideID(category: "Trip", name: name), original: "\(folder)/\(name)\(tail)", renditions: [],
            timestamp: timestamp)
    }

    @Test func plainPhotosPackAndComeBackWhole() {
        let slides = [
            Self.plain("img10"), Self.plain("Img2", tail: ".JPEG"), Self.plain("2024/nested"), Self.plain("été"),
            Self.plain("b", timestamp: 1_700_000_000),
        ]
        let withRendition = Slide(
            id: SlideID(category: "Trip", name: "beach"), original: "\(Self.folder)/beach.jpg",
            renditions: [Slide.Rendition(path: "\(Self.folder)/beach@800x480.jpg", size: Size(width: 800, height: 480))]
        )
        let elsewhere = Slide(id: SlideID(category: "Trip", name: "far"), original: "/mnt/far.jpg", renditions: [])
        let catalog = SlideCatalog(slides + [withRendition, elsewhere], folder: Self.folder)
        #expect(catalog.count == 7)
        #expect(catalog.slides.map(\.id.name) == ["2024/nested", "b", "beach", "far", "Img2", "img10", "été"])
        for slide in slides + [withRendition, elsewhere] {
            let index = catalog.index(of: slide.id)
            #expect(index.map { catalog.slide(at: $0) } == slide)
        }
        #expect(catalog.index(of: SlideID(category: "Trip", name: "img1")) == nil)
        #expect(catalog.index(of: SlideID(category: "Other", name: "img10")) == nil)
    }

    @Test func replacedAndRemovedEntriesKeepOtherIndicesUntilCompaction() throws {
        var catalog = SlideCatalog((0..<6).map { Self.plain("p\($0)") }, folder: Self.folder)
        let p4 = try #require(catalog.index(of: SlideID(category: "Trip", name: "p4")))
        let added = catalog.append([Self.plain("p2", tail: ".jpeg"), Self.plain("p9")])
        #expect(catalog.count == 7)
        #expect(catalog.removedCount == 1)
        #expect(catalog.slide(at: added[0]).original == "\(Self.folder)/p2.jpeg")
        #expect(catalog.index(of: SlideID(category: "Trip", name: "p4")) == p4)
        catalog.remove([p4])
        #expect(catalog.slides.map(\.id.name) == ["p0", "p1", "p2", "p3", "p5", "p9"])
        #expect(!catalog.isLive(p4))
        let (compacted, renumbered) = catalog.compacted()
        #expect(compacted.slides == catalog.slides)
        #expect(compacted.removedCount == 0)
        #expect(compacted.capacity == 6)
        #expect(renumbered[Int(p4)] == -1)
        #expect(compacted.slide(at: renumbered[Int(added[1])]).id.name == "p9")
    }

    @Test func mergingFindsEachArrivalsPlaceAfterItsTies() {
        let existing: [Int32] = [10, 20, 20, 30, 40]
        let merged = SlideCatalog.merged(existing, [5, 20, 25, 45]) { $0 < $1 }
        #expect(merged == [5, 10, 20, 20, 20, 25, 30, 40, 45])
        #expect(SlideCatalog.merged([], [1, 2]) { $0 < $1 } == [1, 2])
        #expect(SlideCatalog.merged([1, 2], []) { $0 < $1 } == [1, 2])
    }

    /// A listing packed straight from the folder gives the slides the old per-file grouping gave, for names that
    /// are ASCII or not, two originals of one name, and renditions alone.
    @Test func aPackedListingGroupsOriginalsAndRenditions() throws {
        let folder = try TemporaryFolder()
        for name in [
            "Trip/a.jpeg", "Trip/a.jpg", "Trip/b@800x480.jpg", "Trip/b@1920x1080.jpg", "Trip/Zürich.jpg",
            "Trip/zebra.JPG", "Trip/x/y/deep.jpg", "Trip/c.jpg",
        ] {
            try folder.write(name, [1])
        }
        let library = Library(root: folder.path)
        let category = LibraryCategory(name: "Trip", path: "\(folder.path)/Trip")
        let catalog = try #require(try library.catalog(of: category, isCancelled: { false }))
        let slides = catalog.slides
        #expect(slides.map(\.id.name) == ["a", "b", "c", "x/y/deep", "zebra", "Zürich"])
        #expect(slides[0].original == "\(folder.path)/Trip/a.jpeg")
        #expect(slides[1].original == nil)
        #expect(slides[1].renditions.map(\.size) == [Size(width: 800, height: 480), Size(width: 1920, height: 1080)])
        #expect(slides[3].original == "\(folder.path)/Trip/x/y/deep.jpg")
        #expect(slides[4].original == "\(folder.path)/Trip/zebra.JPG")
        #expect(try library.catalog(of: category, isCancelled: { true }) == nil)
    }

    /// Renditions made in the background live in a cache mirroring the library: they join their photo's slide,
    /// unless the photo went or was replaced after the rendition was made.
    @Test func cachedRenditionsJoinOnlyPhotosThatAreThereAndOlder() throws {
        let folder = try TemporaryFolder()
        for name in ["library/Trip/a.jpg", "library/Trip/b.jpg", "library/Trip/2024/c.jpg"] {
            try folder.write(name, [1])
        }
        for name in [
            "cache/Trip/a@160x96.jpg", "cache/Trip/b@160x96.jpg", "cache/Trip/2024/c@96x96.jpg",
            "cache/Trip/gone@160x96.jpg", "cache/Trip/a.jpg",
        ] {
            try folder.write(name, [1])
        }
        // b.jpg was replaced after its rendition was made.
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, "\(folder.path)/cache/Trip/b@160x96.jpg", &times, 0) == 0)
        let library = Library(root: "\(folder.path)/library")
        let category = LibraryCategory(name: "Trip", path: "\(folder.path)/library/Trip")
        let catalog = try #require(
            try library.catalog(of: category, renditionCache: "\(folder.path)/cache", isCancelled: { false }))
        let slides = catalog.slides
        #expect(slides.map(\.id.name) == ["2024/c", "a", "b"])
        #expect(slides[0].renditions.map(\.path) == ["\(folder.path)/cache/Trip/2024/c@96x96.jpg"])
        #expect(slides[1].original == "\(folder.path)/library/Trip/a.jpg")
        #expect(slides[1].renditions.map(\.path) == ["\(folder.path)/cache/Trip/a@160x96.jpg"])
        #expect(slides[2].renditions.isEmpty)
    }

    /// Renditions named as `vitrine renditions` names them pack with their photo; one named otherwise (a zero-padded
    /// size, another extension) keeps the slide whole, with every path as it is on disk.
    @Test func renditionsPackWhenTheirNamesCanBeMadeAgain() throws {
        let folder = try TemporaryFolder()
        for name in [
            "Trip/a.jpg", "Trip/a@800x480.jpg", "Trip/a@1920x1080.jpg", "Trip/b@0800x480.jpg", "Trip/b.jpg",
            "Trip/c@640x480.jpeg", "Trip/d@320x200.jpg",
        ] {
            try folder.write(name, [1])
        }
        let category = LibraryCategory(name: "Trip", path: "\(folder.path)/Trip")
        let catalog = try #require(try Library(root: folder.path).catalog(of: category, isCancelled: { false }))
        let slides = catalog.slides
        #expect(slides.map(\.id.name) == ["a", "b", "c", "d"])
        #expect(slides[0].files == ["a.jpg", "a@800x480.jpg", "a@1920x1080.jpg"].map { "\(category.path)/\($0)" })
        #expect(slides[1].files == ["b.jpg", "b@0800x480.jpg"].map { "\(category.path)/\($0)" })
        #expect(slides[2].files == ["\(category.path)/c@640x480.jpeg"])
        #expect(slides[3].original == nil)
        #expect(slides[3].files == ["\(category.path)/d@320x200.jpg"])
        // A copy made slide by slide holds the same slides, and tells a changed rendition set apart.
        let copy = SlideCatalog(slides, folder: category.path)
        #expect(copy.slides == slides)
        var changed = slides[0]
        changed.renditions.removeLast()
        let other = SlideCatalog([changed] + slides.dropFirst(), folder: category.path)
        let first = try #require(catalog.index(of: slides[0].id))
        let second = try #require(catalog.index(of: slides[1].id))
        #expect(!catalog.sameFiles(first, as: other, try #require(other.index(of: slides[0].id))))
        #expect(catalog.sameFiles(second, as: other, try #require(other.index(of: slides[1].id))))
    }
}
