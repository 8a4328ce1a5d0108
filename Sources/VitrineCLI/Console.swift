#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where command output goes; tests swap in a recording console to check what a user would read.
public protocol Console: AnyObject {
    func out(_ text: String)
    func error(_ text: String)
}

/// Standard output and standard error.
public final class StandardConsole: Console {
    public init() {}

    public func out(_ text: String) { Self.write(text, to: STDOUT_FILENO) }

    public func error(_ text: String) { Self.write(text, to: STDERR_FILENO) }

    /// Unbuffered writes: a line must be out before a crash or a kill could lose it.
    static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            bytes = bytes.dropFirst(count)
        }
    }
}
