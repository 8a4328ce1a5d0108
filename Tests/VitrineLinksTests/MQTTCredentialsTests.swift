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

/// The broker password is kept in a file of its own that nobody else on the board may read.
struct MQTTCredentialsTests {
    static func write(_ text: String, mode: mode_t, in folder: TemporaryFolder) throws -> String {
        let path = "\(folder.path)/mqtt.secret"
        try FileBytes.writeAtomically(Array(text.utf8), to: path)
        chmod(path, mode)
        return path
    }

    @Test func theUserAndPasswordAreTheFirstTwoLines() throws {
        let folder = try TemporaryFolder()
        let path = try Self.write("frame\ns3cret with spaces\n", mode: 0o600, in: folder)
        #expect(try MQTTCredentials.load(path) == LoginFile(user: "frame", password: "s3cret with spaces"))
        let group = try Self.write("frame\r\npw\r\n", mode: 0o640, in: folder)
        #expect(try MQTTCredentials.load(group) == LoginFile(user: "frame", password: "pw"))
    }

    @Test func aFileOthersCanReadIsRefusedWithWhatToDo() throws {
        let folder = try TemporaryFolder()
        let path = try Self.write("frame\npw\n", mode: 0o644, in: folder)
        #expect(throws: MQTTError.self) { try MQTTCredentials.load(path) }
        do {
            _ = try MQTTCredentials.load(path)
        } catch {
            #expect(
                error.description
                    == "mqtt: credentials file \(path): others can read or write it (mode 644); chmod o-rwx it "
                    + "(e.g. 640 or 600)")
        }
    }

    @Test func aMissingOrMalformedFileNamesTheFile() throws {
        let folder = try TemporaryFolder()
        let missing = "\(folder.path)/none"
        do {
            _ = try MQTTCredentials.load(missing)
            Issue.record("a missing file was accepted")
        } catch {
            #expect(error.description.hasPrefix("mqtt: credentials file \(missing): cannot read it: No such file"))
        }
        let oneLine = try Self.write("frame\n", mode: 0o600, in: folder)
        do {
            _ = try MQTTCredentials.load(oneLine)
            Issue.record("a file without a password was accepted")
        } catch {
            #expect(
                error.description.contains("expected two lines, the user name and then the password (found 1 line)"))
        }
    }
}
