import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An MQTT setting the player cannot use: which file or setting, what is wrong, and errno when a call failed.
/// A broker that is down or refuses the player is not an error: `BrokerConnection` retries it.
public struct MQTTError: Error, Equatable, Sendable, CustomStringConvertible {
    public var subject: String
    public var problem: String
    public var errno: Int32?

    public init(_ subject: String, _ problem: String, errno: Int32? = nil) {
        self.subject = subject
        self.problem = problem
        self.errno = errno
    }

    public var description: String {
        let reason = errno.map { ": \(String(cString: strerror($0)))" } ?? ""
        return "mqtt: \(subject): \(problem)\(reason)"
    }
}
