#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A user name and password from a file kept out of the config (which is often world-readable and copied around
/// a fleet): the user name on the first line, the password on the second. MQTT's broker and the sources' servers
/// read theirs this way.
public struct LoginFile: Equatable, Sendable {
    public var user: String
    public var password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// Why a login file cannot be used: the problem in words and errno when a call failed.
    public struct Problem: Error, Equatable, Sendable {
        public var message: String
        public var errno: Int32?
    }

    /// Refuses a file that others can read or write: a password anyone on the board can read is no password.
    public static func load(_ path: String) throws(Problem) -> LoginFile {
        var status = stat()
        guard stat(path, &status) == 0 else { throw Problem(message: "cannot read it", errno: errno) }
        let others = status.st_mode & 0o007
        guard others == 0 else {
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw Problem(
                message: "others can read or write it (mode \(mode)); chmod o-rwx it (e.g. 640 or 600)", errno: nil)
        }
        let text: String
        do {
            text = try FileBytes.readText(path)
        } catch {
            throw Problem(message: "cannot read it", errno: error.errno)
        }
        return try parse(text)
    }

    public static func parse(_ text: String) throws(Problem) -> LoginFile {
        // "\r\n" is one Character in Swift: a file written on Windows splits at it too.
        var lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }.map(String.init)
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard lines.count == 2, !lines[0].isEmpty else {
            throw Problem(
                message: "expected two lines, the user name and then the password (found \(lines.count) line"
                    + "\(lines.count == 1 ? "" : "s"))", errno: nil)
        }
        return LoginFile(user: lines[0], password: lines[1])
    }
}
