import Testing
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineCore

@Suite struct LibraryTests {
    @Test func theShippedConfigFindsTheSampleLibrary() throws {
        let settings = try Settings.load(path: "\(repositoryRoot)/Config/vitrine.json")
        let categories = try Library(root: settings.library).categories()
        #expect(categories.count >= 2)
    }

    @Test func categoriesAreSubfoldersPlusTheRoot() throws {
        let folder = try TemporaryFolder()
        try folder.write("Zoo/a.jpg", [1])
        try folder.write("beach/b.JPG", [1])
        try folder.write("Album 10/c.jpeg", [1])
        try folder.write("Album 9/d.jpg", [1])
        try folder.write("loose.jpg", [1])
        try folder.write(".hidden/e.jpg", [1])
        try folder.write("notes.txt", [1])
        let names = try Library(root: folder.path).categories().map(\.name)
        #expect(names == ["", "Album 9", "Album 10", "beach", "Zoo"])
    }

    @Test func noRootCategoryWithoutRootPhotos() throws {
        let folder = try TemporaryFolder()
        try folder.write("A/a.jpg", [1])
        try folder.write("readme.md", [1])
        #expect(try Library(root: folder.path).categories().map(\.name) == ["A"])
    }

    @Test func renditionsGroupWithTheirSlideAndJunkIsIgnored() throws {
        let folder = try TemporaryFolder()
        for name in [
            "Trip/beach.jpg", "Trip/beach@800x480.jpg", "Trip/beach@1920x1080.jpg", "Trip/only@640x480.jpg",
            "Trip/img10.jpg", "Trip/img2.jpg", "Trip/2024/nested.jpg", "Trip/.DS_Store", "Trip/.sync.jpg",
            "Trip/upload.jpg.part", "Trip/x.tmp", "Trip/backup.jpg~", "Trip/movie.mp4", "Trip/shot.png",
            "Trip/saved.WebP", "Trip/anim.gif",
            "Trip/dl.jpg.crdownload", "Trip/odd@big.jpg",
        ] {
            try folder.write(name, [1])
        }
        let library = Library(root: folder.path)
        let category = try #require(try library.categories().first)
        let slides = try library.slides(in: category)
        #expect(
            slides.map(\.id.name) == [
                "2024/nested", "beach", "img2", "img10", "movie", "odd@big", "only", "saved", "shot",
            ])
        // A clip is a slide too (see "Video"): told by its name here, by its content when it is read.
        #expect(slides.first { $0.id.name == "movie" }?.isClip == true)
        let beach = try #require(slides.first { $0.id.name == "beach" })
        #expect(beach.id == SlideID(category: "Trip", name: "beach"))
        #expect(beach.original == "\(folder.path)/Trip/beach.jpg")
        #expect(beach.renditions.map(\.size) == [Size(width: 800, height: 480), Size(width: 1920, height: 1080)])
        let only = try #require(slides.first { $0.id.name == "only" })
        #expect(only.original == nil)
        #expect(only.renditions.count == 1)
    }

    @Test func theRootCategoryHoldsOnlyRootFiles() throws {
        let folder = try TemporaryFolder()
        try folder.write("top.jpg", [1])
        try folder.write("Sub/inner.jpg", [1])
        let library = Library(root: folder.path)
        let root = try #require(try library.categories().first { $0.isRoot })
        #expect(try library.slides(in: root).map(\.id.name) == ["top"])
    }

    @Test func aMissingLibraryNamesTheFolderAndErrno() {
        #expect {
            _ = try Library(root: "/nonexistent/photos").categories()
        } throws: { error in
            (error as? FileError)?.description == "/nonexistent/photos: cannot open folder: No such file or directory"
        }
    }

    @Test func photoNames() {
        #expect(Library.isPhotoName("a.jpg"))
        #expect(Library.isPhotoName("A.JPEG"))
        #expect(!Library.isPhotoName(".a.jpg"))
        #expect(!Library.isPhotoName("a.jpg.part"))
        #expect(!Library.isPhotoName("a.jpg~"))
        #expect(Library.isPhotoName("screenshot.png"))
        #expect(Library.isPhotoName("saved.WEBP"))
        for name in ["IMG_0001.HEIC", "IMG_0002.heif", "R5_0003.HIF", "pixel.avif"] {
            #expect(Library.isPhotoName(name))
        }
        #expect(!Library.isPhotoName("a.gif"))
        #expect(!Library.isPhotoName("a.png.part"))
        #expect(Library.renditionParts(of: "sea@800x480.jpg")?.size == Size(width: 800, height: 480))
        #expect(Library.renditionParts(of: "sea@800x480.jpg")?.name == "sea")
        #expect(Library.renditionParts(of: "me@home.jpg") == nil)
        #expect(Library.renditionParts(of: "@800x480.jpg") == nil)
    }

    @Test func naturalOrder() {
        let sorted = ["img10", "Img2", "img1", "img02b", "b", "A"].sorted(by: NaturalOrder.less)
        #expect(sorted == ["A", "b", "img1", "Img2", "img02b", "img10"])
    }
}

@Suite struct NaturalOrderTests {
    /// The byte-wise ASCII path must give the order the Unicode-scalar path gives, on names made of the characters
    /// where they could part: digits, zeros, case, punctuation on either side of the letters.
    @Test func theASCIIPathAgreesWithTheScalarPath() {
        var generator = SeededGenerator(seed: 7)
        let alphabet = Array("0019aAbBzZ_-.@ ~[`")
        var names: [String] = []
        for _ in 0..<600 {
            let length = Int.random(in: 0...7, using: &generator)
            names.append(
                String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }))
        }
        var disagreements: [String] = []
        for (left, right) in zip(names, names.shuffled(using: &generator))
        where NaturalOrder.less(left, right) != NaturalOrder.scalarLess(left, right) {
            disagreements.append("\(left) < \(right)")
        }
        for left in names.prefix(60) {
            for right in names.prefix(60) where NaturalOrder.less(left, right) != NaturalOrder.scalarLess(left, right) {
                disagreements.append("\(left) < \(right)")
            }
        }
        #expect(disagreements.isEmpty)
    }

    @Test func namesThatAreNotASCIIKeepTheirOrder() {
        let sorted = ["Été2", "été10", "ete1", "Zoë", "zoe"].sorted(by: NaturalOrder.less)
        #expect(sorted == ["ete1", "zoe", "Zoë", "Été2", "été10"])
    }
}
