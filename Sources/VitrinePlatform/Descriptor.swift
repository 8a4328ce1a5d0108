#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A file descriptor with one owner, who closes it exactly once: when the owner ends, or earlier with `close()`.
/// It cannot be copied, so no second owner can close the number again after the kernel has given it to another
/// file. `number` is for system calls only; `release()` hands the descriptor to code that closes it itself.
public struct Descriptor: ~Copyable, Sendable {
    public let number: Int32

    /// Takes ownership of `number` (a negative one owns nothing).
    public init(taking number: Int32) {
        self.number = number
    }

    deinit {
        // close(2) frees the number even when it reports an error (EIO from a network filesystem, EINTR): retrying
        // could close a number another thread has just been given, and the owner has no use for the error.
        if number >= 0 { _ = Glibc.close(number) }
    }

    /// Closes it now.
    public consuming func close() {}

    /// Closes it now and returns errno when close(2) failed: for a file just written, EIO or ENOSPC here (a network
    /// filesystem reports delayed write errors only at close) means the data may not be there.
    public consuming func closeReportingError() -> Int32? {
        let result = Glibc.close(number)
        let failure = Glibc.errno
        discard self
        return result == 0 ? nil : failure
    }

    /// Hands the number over without closing it.
    public consuming func release() -> Int32 {
        let number = self.number
        discard self
        return number
    }
}

/// System calls in one place: a call that fails with -1 throws a `RuntimeError` naming what was attempted, on which
/// file, and errno; EINTR (a signal arrived during the call) is retried.
public enum SystemCall {
    @discardableResult
    public static func run<Result: BinaryInteger>(
        _ operation: String, path: String? = nil, _ call: () -> Result
    ) throws(RuntimeError) -> Result {
        while true {
            let result = call()
            if result != -1 { return result }
            let failure = Glibc.errno
            if failure == EINTR { continue }
            throw RuntimeError(operation, path: path, errno: failure)
        }
    }

    /// Opens a descriptor with `call` and owns it.
    public static func open(_ operation: String, path: String? = nil, _ call: () -> Int32) throws(RuntimeError)
        -> Descriptor
    {
        Descriptor(taking: try run(operation, path: path, call))
    }
}
