import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineCLI

/// `vitrine sync` without a server: what it asks for, and a server that is not there. Syncs against real servers
/// are Tests/Sync/test_sync.py's.
@Suite struct SyncCommandTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    func run(_ arguments: [String]) -> (status: Int32, output: String, errors: String) {
        RecordingConsole.run(arguments)
    }

    @Test func itAsksForOnceAndForSources() throws {
        try folder.write("plain.json", text: "{\"library\": \"library\"}")
        let bare = run(["sync", "--config", "\(folder.path)/plain.json"])
        #expect(bare.status == 2 && bare.errors.contains("say --once"), "\(bare.errors)")
        let none = run(["sync", "--once", "--config", "\(folder.path)/plain.json"])
        #expect(none.status == 1 && none.errors.contains("plain.json has no sources"), "\(none.errors)")
    }

    @Test func aServerThatIsNotThereIsOfflineAndTheLibraryKeepsItsPhotos() throws {
        let size = Size(width: 16, height: 8)
        let jpeg = try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.blue, size: size), size: size)
        let photo = try folder.write("library/Family/mine.jpg", jpeg)
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        try folder.write(
            "frame.json",
            text: """
                {"library": "library", "sources": [{"kind": "webdav", "url": "http://127.0.0.1:1/dav/",
                 "category": "Family"}]}
                """)
        let unknown = run(["sync", "--once", "--source", "nas", "--config", "\(folder.path)/frame.json"])
        #expect(unknown.status == 2 && unknown.errors.contains("no source \"nas\" (known: Family)"))
        let result = run(["sync", "--once", "--config", "\(folder.path)/frame.json"])
        #expect(result.status == 1)
        #expect(result.errors.hasPrefix("Family: offline: http://127.0.0.1:1/dav/: "), "\(result.errors)")
        #expect(try FileBytes.read(photo) == jpeg)
        #expect(try Folder.entryNames(in: "\(folder.path)/library/Family") == ["mine.jpg"])
    }
}
