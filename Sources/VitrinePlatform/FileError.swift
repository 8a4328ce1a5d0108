#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A file-system call that failed, with the file and the errno it failed with.
public struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var operation: String
    public var errno: Int32

    public init(path: String, operation: String, errno: Int32) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }

    public var reason: String { String(cString: strerror(errno)) }

    public var description: String { "\(path): cannot \(operation): \(reason)" }
}
