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

    /// Refuses a file that others can read or write: a password anyone on the board can read is no password.
    public static func load(_ path: String) throws(MQTTError) -> MQTTCredentials {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw MQTTError("credentials file \(path)", "cannot read it", errno: errno)
        }
        let others = status.st_mode & 0o007
        guard others == 0 else {
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw MQTTError(
                "credentials file \(path)",
                "others can read or write it (mode \(mode)); chmod o-rwx it (e.g. 640 or 600)")
        }
        let text: String
        do {
            text = try FileBytes.readText(path)
        } catch {
            throw MQTTError("credentials file \(path)", "cannot read it", errno: error.errno)
        }
        return try parse(text, file: path)
    }

    static func parse(_ text: String, file: String) throws(MQTTError) -> MQTTCredentials {
        // "\r\n" is one Character in Swift: a file written on Windows splits at it too.
        var lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }.map(String.init)
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard lines.count == 2, !lines[0].isEmpty else {
            throw MQTTError(
                "credentials file \(file)",
                "expected two lines, the user name and then the password (found \(lines.count) line"
                    + "\(lines.count == 1 ? "" : "s"))")
        }
        return MQTTCredentials(user: lines[0], password: lines[1])
    }
}
