import CLinux

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// systemd's readiness and watchdog protocol (sd_notify(3)): `KEY=VALUE` lines in one datagram to the unix socket
/// named by `$NOTIFY_SOCKET`. Spoken directly rather than through libsystemd: it is one `sendto`, and boards without
/// systemd then need no extra library.
public final class ServiceNotifier {
    public let socketPath: String
    /// How often to tell the watchdog the player is alive: half its timeout, as sd_watchdog_enabled(3) advises;
    /// nil when no watchdog is set (or `$WATCHDOG_PID` names another process, e.g. a shell that started us).
    public let watchdogInterval: Double?
    private let owned: Descriptor
    private var descriptor: Int32 { owned.number }

    /// Nil when the player was not started by a service manager that listens.
    public static func fromEnvironment() -> ServiceNotifier? {
        guard let socket = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !socket.isEmpty else { return nil }
        var interval: Double?
        if let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }), let microseconds = UInt64(text),
            microseconds > 0
        {
            let pid = getenv("WATCHDOG_PID").map { String(cString: $0) }
            if pid == nil || pid == String(getpid()) { interval = Double(microseconds) / 2e6 }
        }
        return ServiceNotifier(socketPath: socket, watchdogInterval: interval)
    }

    init?(socketPath: String, watchdogInterval: Double?) {
        owned = Descriptor(taking: socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0))
        guard owned.number >= 0 else { return nil }
        self.socketPath = socketPath
        self.watchdogInterval = watchdogInterval
    }

    /// Sends one notification (e.g. "READY=1\nSTATUS=playing"); false when the manager did not take it, which the
    /// player cannot do anything about.
    @discardableResult
    public func send(_ state: String) -> Bool {
        let bytes = Array(state.utf8)
        return bytes.withUnsafeBytes { buffer in
            vitrine_unix_send_datagram(descriptor, socketPath, buffer.baseAddress, buffer.count) == buffer.count
        }
    }
}
