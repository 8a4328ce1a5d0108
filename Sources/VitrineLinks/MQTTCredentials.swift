import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The broker's user name and password, from a file kept out of the config (which is often world-readable and
/// copied around a fleet): the user name on the first line, the password on the second.
public struct MQTTCredentials: Equatable, Sendable {
    public var user: String
    public var password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// Refuses a file that others can read or write (`LoginFile`).
    public static func load(_ path: String) throws(MQTTError) -> MQTTCredentials {
        do {
            let login = try LoginFile.load(path)
            return MQTTCredentials(user: login.user, password: login.password)
        } catch {
            throw MQTTError("credentials file \(path)", error.message, errno: error.errno)
        }
    }
}
