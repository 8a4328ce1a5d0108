import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A GPIO line that could not be used: which line, what was attempted, and errno, with what usually causes it on
/// a Raspberry Pi.
public struct GPIOError: Error, Equatable, Sendable, CustomStringConvertible {
    public var line: String
    public var operation: String
    public var errno: Int32

    public init(line: String, operation: String, errno: Int32) {
        self.line = line
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        let reason = String(cString: strerror(errno))
        let hint: String
        switch errno {
        case EBUSY: hint = " (another program or a device-tree overlay holds it; `gpioinfo` shows which)"
        case EACCES, EPERM: hint = " (the player's user needs access to /dev/gpiochip*: the gpio group on a Pi)"
        case ENOENT, ENODEV: hint = " (`gpiodetect` and `gpioinfo` list the chips and line names there are)"
        default: hint = ""
        }
        return "gpio \(line): cannot \(operation): \(reason)\(hint)"
    }
}
