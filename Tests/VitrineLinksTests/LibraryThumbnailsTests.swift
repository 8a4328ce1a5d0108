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

/// The web remote's thumbnails on disk: made once, forgotten with their photo, and kept under a size limit.
@Suite struct LibraryThumbnailsTests {
    @Test func aTrashedPhotosThumbnailIsForgottenAndTheFolderStaysUnderItsLimit() throws {
        let temporary = try TemporaryFolder()
        let root = temporary.path
        let size = Size(width: 64, height: 48)
        let jpeg = try JPEGFixture.encode(
            rgb: JPEGFixture.solid(RGBColor(red: 20, green: 200, blue: 20), size: size), size: size)
        for name in ["a.jpg", "b.jpg"] { try FileBytes.writeAtomically(jpeg, to: "\(root)/\(name)") }
        let folder = "\(root)/.thumbnails"
        let thumbnails = LibraryThumbnails(
            budget: MemoryBudget(limit: 64 << 20), libraryRoot: root, renditionCache: nil, folder: folder)
        #expect(thumbnails.make("\(root)/a.jpg").status == 200)
        #expect(thumbnails.make("\(root)/b.jpg").status == 200)
        #expect(try Folder.entryNames(in: folder).count == 2)
        // An edited photo gets a new thumbnail, and its old one goes.
        try FileBytes.writeAtomically(jpeg + [0xFF, 0xD9], to: "\(root)/a.jpg")
        #expect(thumbnails.make("\(root)/a.jpg").status == 200)
        let prefix = LibraryThumbnails.pathHash("\(root)/a.jpg") + "-"
        #expect(try Folder.entryNames(in: folder).filter { $0.hasPrefix(prefix) }.count == 1)
        thumbnails.forget("\(root)/a.jpg")
        #expect(try Folder.entryNames(in: folder).filter { $0.hasPrefix(prefix) }.isEmpty)
        #expect(thumbnails.cached("\(root)/a.jpg") == nil)
        // Over its limit, the oldest go first.
        for index in 0..<10 {
            try FileBytes.writeAtomically([UInt8](repeating: 1, count: 1000), to: "\(folder)/x\(index).jpg")
        }
        LibraryThumbnails.prune(folder, limit: 5000)
        let left = try Folder.entryNames(in: folder)
        let bytes = left.reduce(0) { total, name in
            var status = stat()
            return total + (stat("\(folder)/\(name)", &status) == 0 ? Int(status.st_size) : 0)
        }
        #expect(bytes <= 5000 && !left.isEmpty, "\(left)")
    }
}
