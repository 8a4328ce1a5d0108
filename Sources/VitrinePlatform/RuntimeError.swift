#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A system call of the player's runtime that failed: what was attempted, on which file or socket, and errno.
public struct RuntimeError: Error, Equatable, Sendable, CustomStringConvertible {
    public var operation: String
    public var path: String?
    public var errno: Int32

    public init(_ operation: String, path: String? = nil, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var description: String {
        let reason = String(cString: strerror(errno))
        return path.map { "\($0): cannot \(operation): \(reason)" } ?? "cannot \(operation): \(reason)"
    }

    /// The error of the call that just failed.
    package static func last(_ operation: String, path: String? = nil) -> RuntimeError {
        RuntimeError(operation, path: path, errno: Glibc.errno)
    }
}
