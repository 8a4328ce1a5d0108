#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How much a log line matters, as syslog numbers it (syslog(3)); journald keeps it as the PRIORITY field.
public enum LogLevel: Int, Sendable, CaseIterable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
}

/// The player's log: one line per event on standard error. Under systemd, where standard error is the journal,
/// each line starts with its syslog priority (`<4>`, sd-daemon(3)) instead of the program name, which the journal
/// records anyway. A warning is said once: a broken photo met on every round of the show is reported the first
/// time only, so the journal of a kiosk that runs for months is not one line repeated.
public final class EventLog {
    public let journal: Bool
    private let write: (String) -> Void
    private var warned: Set<String> = []
    /// Remembered warnings; past this the set starts over, so a library of endless broken files cannot grow it.
    static let rememberedWarnings = 4096

    public init(journal: Bool = EventLog.standardErrorIsJournal(), write: @escaping (String) -> Void) {
        self.journal = journal
        self.write = write
    }

    public func callAsFunction(_ message: String) { self(.info, message) }

    public func callAsFunction(_ level: LogLevel, _ message: String) {
        if level == .warning {
            guard !warned.contains(message) else { return }
            if warned.count >= Self.rememberedWarnings { warned.removeAll() }
            warned.insert(message)
        }
        write(line(level, message))
    }

    /// Warnings said so far may be said again (the config was reloaded, so the user may have fixed things).
    public func forgetWarnings() { warned.removeAll() }

    /// The text written for one event. A line break in a message would split the event in the journal, and other
    /// control characters (a carriage return, an escape sequence in a file name or an MQTT payload) would rewrite
    /// what a terminal shows: each becomes a space. Done on scalars: "\r\n" is one Character, which a split on
    /// "\n" does not see.
    func line(_ level: LogLevel, _ message: String) -> String {
        let flat =
            message.unicodeScalars.contains(where: Self.isControl)
            ? String(String.UnicodeScalarView(message.unicodeScalars.map { Self.isControl($0) ? " " : $0 }))
            : message
        return journal ? "<\(level.rawValue)>\(flat)\n" : "vitrine: \(flat)\n"
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// systemd names the journal stream it connects to standard error in `$JOURNAL_STREAM` ("device:inode",
    /// systemd.exec(5)); standard error that was redirected elsewhere does not match it.
    public static func standardErrorIsJournal() -> Bool {
        guard let value = getenv("JOURNAL_STREAM") else { return false }
        let parts = String(cString: value).split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(STDERR_FILENO, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }
}
