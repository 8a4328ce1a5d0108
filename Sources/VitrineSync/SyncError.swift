#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What stopped a sync, kept apart by what the player does about it: waits and tries again (the server away,
/// busy, or refusing the password), or says the answer was bad. Each carries where: the source's URL or the file.
public struct SyncError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// No answer: the name does not resolve, nothing listens, the link stalls, TLS fails to connect.
        case offline
        /// 503 or 429: try again after this many seconds (the server's Retry-After), or after the backoff.
        case busy(retryAfter: Int64?)
        /// 401 or 403, or SMB's logon failure: a wrong password stays wrong until someone changes it.
        case refused
        /// The server answered something that cannot be used: malformed XML, a name leaving the cache, a file
        /// larger than its listing said, a redirect loop, a listing too large.
        case badAnswer
        /// The cache: a full disk, a folder that cannot be made.
        case local
        /// A source's settings that cannot work: a credentials file others can read, a CA file missing.
        case settings
    }

    public var kind: Kind
    /// The URL, share path or cache file concerned.
    public var place: String
    public var message: String
    /// errno for a local failure, else 0.
    public var errno: Int32

    public init(_ kind: Kind, _ place: String, _ message: String, errno: Int32 = 0) {
        self.kind = kind
        self.place = place
        self.message = message
        self.errno = errno
    }

    public var description: String {
        let reason = errno == 0 ? "" : " (\(String(cString: strerror(errno))))"
        return "\(place): \(message)\(reason)"
    }
}
