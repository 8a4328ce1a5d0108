import Testing

@testable import VitrineCore

/// Names phones and hostile clients send with an upload, and what the library gets.
@Suite struct UploadNameTests {
    static func safe(_ name: String, taken: Set<String> = []) -> Result<String, UploadName.Refusal> {
        UploadName.safe(name, taken: { taken.contains($0) })
    }

    @Test func aPhonesNameIsKept() {
        #expect(Self.safe("IMG_20261202_101500.jpg") == .success("IMG_20261202_101500.jpg"))
        #expect(Self.safe("  Beach day.HEIC ") == .success("Beach day.HEIC"))
    }

    /// "été.jpg" from an iPhone (decomposed) and from Android (composed) is one name, saved composed: a second
    /// upload of it gets " (2)" instead of a second file whose name looks the same. Swift's == compares canonical
    /// equivalence, so the bytes are compared.
    @Test func namesAreSavedComposed() throws {
        let decomposed = "e\u{301}te\u{301}.jpg"
        let composed = "\u{E9}t\u{E9}.jpg"
        #expect(Array(decomposed.utf8) != Array(composed.utf8))
        for offered in [decomposed, composed] {
            let saved = try Self.safe(offered).get()
            #expect(Array(saved.utf8) == Array(composed.utf8))
        }
        let second = UploadName.safe(decomposed, taken: { Array($0.utf8) == Array(composed.utf8) })
        #expect(try second.get() == "\u{E9}t\u{E9} (2).jpg")
    }

    @Test func namesThatLeaveTheFolderAreRefused() {
        for name in ["../escape.jpg", "/etc/vitrine/x.jpg", "a/b.jpg", "..\\win.jpg", "nul\0.jpg"] {
            #expect(Self.safe(name) == .failure(.leavesTheFolder(name)), "\(name)")
        }
    }

    @Test func hiddenRenditionLikeAndControlCharactersAreMadeSafe() {
        #expect(Self.safe(".hidden.jpg") == .success("hidden.jpg"))
        #expect(Self.safe("frame@800x480.jpg") == .success("frame_800x480.jpg"))
        #expect(Self.safe("tab\there.png") == .success("tab_here.png"))
        #expect(Self.safe("..jpg") == .failure(.notAPhoto("..jpg")))
        #expect(Self.safe("") == .failure(.empty))
        #expect(Self.safe("notes.txt") == .failure(.notAPhoto("notes.txt")))
        #expect(Self.safe("photo.jpg.part") == .failure(.notAPhoto("photo.jpg.part")))
    }

    @Test func aTakenNameGetsANumberAndNothingIsOverwritten() {
        #expect(Self.safe("a.jpg", taken: ["a.jpg"]) == .success("a (2).jpg"))
        #expect(Self.safe("a.jpg", taken: ["a.jpg", "a (2).jpg"]) == .success("a (3).jpg"))
        let all = Set(["a.jpg"] + (2...999).map { "a (\($0)).jpg" })
        #expect(Self.safe("a.jpg", taken: all) == .failure(.noFreeName("a.jpg")))
    }

    @Test func anOverlongNameIsShortenedKeepingItsExtension() throws {
        let long = String(repeating: "é", count: 300) + ".webp"
        let name = try Self.safe(long).get()
        #expect(name.utf8.count <= UploadName.maximumBytes)
        #expect(name.hasSuffix("é.webp"))
    }
}
