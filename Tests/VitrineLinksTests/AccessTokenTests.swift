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

/// The web remote's token survives restarts, is readable by the player's user only, and changes when rotated.
struct AccessTokenTests {
    static func mode(_ path: String) -> mode_t {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o777 : 0
    }

    @Test func madeOnceKeptAcrossRestartsAndPrivate() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/web-token"
        let first = try AccessToken.loadOrCreate(path)
        #expect(first.created)
        #expect(AccessToken.isToken(first.token.value))
        #expect(Self.mode(path) == 0o600)
        let again = try AccessToken.loadOrCreate(path)
        #expect(!again.created)
        #expect(again.token == first.token)
        let rotated = try AccessToken.rotate(path)
        #expect(rotated != first.token)
        #expect(try AccessToken.loadOrCreate(path).token == rotated)
    }

    @Test func aWidenedOrDamagedFileIsMadeRightAgain() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/web-token"
        let token = try AccessToken.loadOrCreate(path).token
        chmod(path, 0o644)
        #expect(try AccessToken.loadOrCreate(path).token == token)
        #expect(Self.mode(path) == 0o600)
        try FileBytes.writeAtomically(Array("not a token\n".utf8), to: path)
        let replaced = try AccessToken.loadOrCreate(path)
        #expect(replaced.created && replaced.token != token)
        #expect(Self.mode(path) == 0o600)
    }
}
