import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineLinks

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The library as the web remote changes it, on real files: what is listed, hidden, trashed and uploaded, and what
/// is refused.
@Suite struct PhotoShelfTests {
    let folder: TemporaryFolder

    init() throws { folder = try TemporaryFolder() }

    func library() throws -> (root: String, shelf: PhotoShelf) {
        let root = folder.path
        let size = Size(width: 64, height: 48)
        let jpeg = try JPEGFixture.encode(
            rgb: JPEGFixture.solid(RGBColor(red: 200, green: 20, blue: 20), size: size), size: size)
        for path in ["Beach/b1.jpg", "Beach/b2.jpg", "Beach/Day two/d1.jpg", "flat.jpg"] {
            try FileBytes.createDirectories(PathText.directory(of: "\(root)/\(path)"))
            try FileBytes.writeAtomically(jpeg, to: "\(root)/\(path)")
        }
        return (root, PhotoShelf(library: Library(root: root)))
    }

    @Test func categoriesListTheirPhotosWithNestedFoldersAndTheRootOnlyItsOwn() throws {
        let (_, shelf) = try library()
        #expect(try shelf.photos(in: "Beach").map(\.name) == ["b1.jpg", "b2.jpg", "Day two/d1.jpg"])
        #expect(try shelf.photos(in: "").map(\.name) == ["flat.jpg"])
        #expect(try shelf.photos(in: "Beach").allSatisfy { $0.bytes > 0 && !$0.hidden })
        #expect(throws: WebError(404, "no category \"Mountains\" in the library")) {
            try shelf.photos(in: "Mountains")
        }
    }

    /// The show counts `waterfall.jpg` and its rendition `waterfall@533x800.jpg` as one slide; so does the remote,
    /// and hiding or trashing the photo takes the rendition along (or the show would still play it).
    @Test func renditionsAreNoPhotosOfTheirOwnAndGoWhereTheirPhotoGoes() throws {
        let (root, shelf) = try library()
        let bytes = try FileBytes.read("\(root)/Beach/b1.jpg", limit: 1 << 20)
        try FileBytes.writeAtomically(bytes, to: "\(root)/Beach/b1@533x800.jpg")
        try FileBytes.writeAtomically(bytes, to: "\(root)/Beach/b2@320x240.jpg")
        try FileBytes.writeAtomically(bytes, to: "\(root)/Beach/lone@320x240.jpg")
        #expect(
            try shelf.photos(in: "Beach").map(\.name) == ["b1.jpg", "b2.jpg", "lone@320x240.jpg", "Day two/d1.jpg"])
        _ = try shelf.setHidden(true, category: "Beach", name: "b1.jpg")
        #expect(FileBytes.exists("\(root)/Beach/.hidden/b1@533x800.jpg"))
        #expect(!FileBytes.exists("\(root)/Beach/b1@533x800.jpg"))
        #expect(try shelf.photos(in: "Beach").filter(\.hidden).map(\.name) == ["b1.jpg"])
        _ = try shelf.setHidden(false, category: "Beach", name: "b1.jpg")
        #expect(FileBytes.exists("\(root)/Beach/b1@533x800.jpg"))
        _ = try shelf.trash(category: "Beach", name: "b2.jpg", hidden: false)
        #expect(FileBytes.exists("\(root)/.trash/Beach/b2@320x240.jpg"))
        #expect(!FileBytes.exists("\(root)/Beach/b2@320x240.jpg"))
        #expect(FileBytes.exists("\(root)/Beach/lone@320x240.jpg"))
    }

    /// An upload cut by a crash or a power cut leaves its hidden file; the remote removes it when it starts.
    @Test func leftoverUploadsAreRemoved() throws {
        let (root, shelf) = try library()
        try FileBytes.writeAtomically([1, 2, 3], to: "\(root)/Beach/.upload-0123abcd.part")
        try FileBytes.writeAtomically([1, 2, 3], to: "\(root)/.upload-99.part")
        try FileBytes.writeAtomically([1, 2, 3], to: "\(root)/Beach/.notes.part")
        #expect(
            Set(shelf.removeLeftoverUploads()) == ["\(root)/Beach/.upload-0123abcd.part", "\(root)/.upload-99.part"])
        #expect(FileBytes.exists("\(root)/Beach/.notes.part"))
        #expect(!FileBytes.exists("\(root)/Beach/.upload-0123abcd.part"))
    }

    @Test func namesThatLeaveTheCategoryAreRefused() throws {
        let (_, shelf) = try library()
        for name in ["../flat.jpg", "/etc/passwd", "Day two/../../flat.jpg", ".hidden/b1.jpg", "", "a//b.jpg"] {
            #expect(throws: WebError.self, "\(name)") { try shelf.file(category: "Beach", name: name, hidden: false) }
        }
        for category in ["..", "../..", "/", "Beach/Day two"] {
            #expect(throws: WebError.self, "\(category)") {
                try shelf.file(category: category, name: "b1.jpg", hidden: false)
            }
        }
        #expect(throws: WebError.self) { try shelf.file(category: "", name: "Beach/b1.jpg", hidden: false) }
    }

    @Test func hidingMovesThePhotoAsideAndShowingBringsItBack() throws {
        let (root, shelf) = try library()
        #expect(try shelf.setHidden(true, category: "Beach", name: "Day two/d1.jpg") == "d1.jpg")
        #expect(FileBytes.exists("\(root)/Beach/.hidden/Day two/d1.jpg"))
        #expect(!FileBytes.exists("\(root)/Beach/Day two/d1.jpg"))
        // The library (what the player shows) no longer has it; the shelf lists it as hidden.
        let slides = try Library(root: root).slides(in: LibraryCategory(name: "Beach", path: "\(root)/Beach"))
        #expect(slides.map(\.id.name) == ["b1", "b2"] || slides.count == 2)
        #expect(try shelf.photos(in: "Beach").filter(\.hidden).map(\.name) == ["Day two/d1.jpg"])
        _ = try shelf.setHidden(false, category: "Beach", name: "Day two/d1.jpg")
        #expect(FileBytes.exists("\(root)/Beach/Day two/d1.jpg"))
    }

    @Test func deletingMovesIntoTheTrashAndNeverOverAnother() throws {
        let (root, shelf) = try library()
        #expect(try shelf.trash(category: "Beach", name: "b1.jpg", hidden: false) == ".trash/Beach/b1.jpg")
        try FileBytes.writeAtomically([1, 2, 3], to: "\(root)/Beach/b1.jpg")
        // A photo of the same name later is kept beside the first, not over it.
        let small = Size(width: 8, height: 8)
        let jpeg = try JPEGFixture.encode(
            rgb: JPEGFixture.solid(RGBColor(red: 1, green: 2, blue: 3), size: small), size: small)
        try FileBytes.writeAtomically(jpeg, to: "\(root)/Beach/b1.jpg")
        #expect(try shelf.trash(category: "Beach", name: "b1.jpg", hidden: false) == ".trash/Beach/b1 (2).jpg")
        #expect(try FileBytes.read("\(root)/.trash/Beach/b1 (2).jpg") == jpeg)
        #expect(try shelf.trash(category: "", name: "flat.jpg", hidden: false) == ".trash/flat.jpg")
        #expect(try Library(root: root).categories().map(\.name) == ["Beach"])
    }

    static func saver(_ shelf: PhotoShelf, limit: UInt64 = 1 << 20, floor: UInt64 = 0) -> UploadSaver {
        UploadSaver(shelf: shelf, limitBytes: limit, floorBytes: floor)
    }

    static func upload(_ started: UploadSaver.Started, _ bytes: [UInt8]) -> WebServer.Upload {
        _ = bytes.withUnsafeBytes { write(started.descriptor, $0.baseAddress, $0.count) }
        return WebServer.Upload(descriptor: started.descriptor, path: started.temporary, bytes: UInt64(bytes.count))
    }

    @Test func anUploadIsCheckedByContentAndNamedWithoutReplacingAnything() throws {
        let (root, shelf) = try library()
        let saver = Self.saver(shelf)
        let side = Size(width: 16, height: 16)
        let jpeg = try JPEGFixture.encode(
            rgb: JPEGFixture.solid(RGBColor(red: 9, green: 9, blue: 9), size: side), size: side)
        let started = try saver.start(category: "Beach", offeredName: "b1.jpg", contentLength: UInt64(jpeg.count))
        #expect(started.temporary.hasPrefix("\(root)/Beach/.upload-"))
        let answer = UploadSaver.finish(started, upload: Self.upload(started, jpeg))
        #expect(answer.status == 201)
        #expect(String(decoding: answer.body, as: UTF8.self).contains("\"name\":\"b1 (2).jpg\""))
        #expect(try FileBytes.read("\(root)/Beach/b1 (2).jpg") == jpeg)
        #expect(!FileBytes.exists(started.temporary))

        let png = try ImageFixture.png(
            samples: [UInt8](repeating: 128, count: 4 * 4 * 3), size: Size(width: 4, height: 4), color: .rgb)
        let second = try saver.start(category: "Beach", offeredName: "sent as.jpg", contentLength: nil)
        #expect(UploadSaver.finish(second, upload: Self.upload(second, png)).status == 201)
        #expect(FileBytes.exists("\(root)/Beach/sent as.png"))

        let third = try saver.start(category: "Beach", offeredName: "noise.jpg", contentLength: nil)
        let refused = UploadSaver.finish(
            third, upload: Self.upload(third, (0..<4096).map { UInt8(($0 * 7919) & 0xFF) }))
        #expect(refused.status == 415)
        #expect(!FileBytes.exists("\(root)/Beach/noise.jpg"))
        #expect(
            try Folder.entryNames(in: "\(root)/Beach").sorted() == [
                "Day two", "b1 (2).jpg", "b1.jpg", "b2.jpg", "sent as.png",
            ])
    }

    @Test func anUploadTooLargeOrTooFullIsRefusedBeforeItsBody() throws {
        let (root, shelf) = try library()
        #expect(throws: WebError.self) {
            try Self.saver(shelf, limit: 1000).start(category: "Beach", offeredName: "big.jpg", contentLength: 2 << 30)
        }
        #expect(throws: WebError.self) {
            try Self.saver(shelf, floor: UInt64.max / 2).start(
                category: "Beach", offeredName: "a.jpg", contentLength: 10)
        }
        #expect(throws: WebError.self) {
            try Self.saver(shelf).start(category: "Beach", offeredName: "../a.jpg", contentLength: 10)
        }
        #expect(try Folder.entryNames(in: "\(root)/Beach").filter { $0.hasPrefix(".") }.isEmpty)
    }
}
