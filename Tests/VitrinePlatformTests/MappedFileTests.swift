import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

/// The place index's file: mapped read-only, errors naming the file and the call, an empty file refused by the
/// index's own rules.
@Suite struct MappedFileTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    @Test func mapsTheFilesBytes() throws {
        let bytes: [UInt8] = Array(0..<200).map { UInt8($0) }
        let path = try folder.write("f.bin", bytes)
        let mapped = try MappedFile(path: path)
        #expect(mapped.path == path)
        #expect(Array(mapped.bytes) == bytes)
    }

    @Test func failuresNameTheFileAndTheCall() throws {
        #expect(throws: FileError(path: "\(folder.path)/none", operation: "open", errno: 2)) {
            try MappedFile(path: "\(folder.path)/none")
        }
        #expect(throws: FileError(path: folder.path, operation: "map", errno: 21)) {
            try MappedFile(path: folder.path)
        }
        let empty = try MappedFile(path: try folder.write("empty", []))
        #expect(empty.bytes.isEmpty)
    }

    @Test func theIndexIsLoadedFromItsFile() throws {
        let path = try folder.write("w.vgeo", PlaceIndexFixture.bytes(PlaceIndexFixture.world))
        let index = try PlaceIndex.load(path: path)
        #expect(index.file == path && index.byteCount > 64)
        let lyon = try #require(GeoCoordinate(latitude: 45.764, longitude: 4.8357))
        #expect(try index.lookup(lyon)?.caption == "Lyon, France")
        // A copy of the index keeps the mapping after the first goes.
        var copy: PlaceIndex? = try PlaceIndex.load(path: path)
        let kept = copy
        copy = nil
        #expect(try kept?.lookup(lyon)?.name == "Lyon")
        #expect(throws: PlaceIndexError(file: "\(folder.path)/none", message: "cannot open: No such file or directory"))
        {
            try PlaceIndex.load(path: "\(folder.path)/none")
        }
        #expect(throws: PlaceIndexError(file: "\(folder.path)/e", message: "empty (not a place index)")) {
            try PlaceIndex.load(path: try folder.write("e", []))
        }
    }
}
