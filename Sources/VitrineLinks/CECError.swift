#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A CEC adapter that could not be used: which device, what was attempted, and errno, with what usually causes it.
public struct CECError: Error, Equatable, Sendable, CustomStringConvertible {
    public var device: String
    public var operation: String
    public var errno: Int32?

    public init(device: String, operation: String, errno: Int32? = nil) {
        self.device = device
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        guard let errno else { return "cec \(device): \(operation)" }
        let hint: String
        switch errno {
        case EACCES, EPERM: hint = " (the player's user needs access to /dev/cec*: the video group)"
        case ENOENT, ENODEV: hint = " (`ls /dev/cec*` lists the adapters; a Pi needs vc4-kms-v3d for CEC)"
        case EBUSY: hint = " (another program, such as cec-client or cec-follower, holds the bus)"
        default: hint = ""
        }
        return "cec \(device): cannot \(operation): \(String(cString: strerror(errno)))\(hint)"
    }
}
