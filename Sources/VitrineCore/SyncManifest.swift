/// A file on a source's server, as its listing describes it.
public struct RemoteFile: Sendable, Equatable {
    /// The names below the source's folder, each checked by `RemoteName`.
    public var path: [String]
    public var size: Int64
    /// Last modified, seconds since 1970.
    public var modified: Int64?
    /// The server's version tag (WebDAV's ETag), when it gives one.
    public var etag: String?

    public init(path: [String], size: Int64, modified: Int64? = nil, etag: String? = nil) {
        self.path = path
        self.size = size
        self.modified = modified
        self.etag = etag
    }
}

/// What a source has put in the library: the files it owns, and what each was on the server when fetched. A sync
/// deletes or replaces only files listed here, so a photo the user put in the same folder is never touched.
///
/// Kept as `.vitrine-sources/NAME.tsv` in the library, beside the photos it describes: a state directory on tmpfs
/// or another disk could outlive or lose them.
public struct SyncManifest: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        /// The cache file, from the library's root: `Family/2024/IMG_1.jpg`.
        public var local: String
        public var remote: RemoteFile
        /// What the cache file takes (a rendition is smaller than the original).
        public var localSize: Int64

        public init(local: String, remote: RemoteFile, localSize: Int64) {
            self.local = local
            self.remote = remote
            self.localSize = localSize
        }
    }

    public var entries: [Entry]

    public init(entries: [Entry] = []) { self.entries = entries }

    static let header = "vitrine-sources 1"

    /// One line per file: local path, remote path, size, modified, etag, local size, separated by tabs. Names
    /// hold no tab or newline (`RemoteName` refuses control characters), nor do the tags kept.
    public func text() -> String {
        var out = Self.header + "\n"
        for entry in entries {
            let remote = entry.remote
            out += entry.local + "\t" + remote.path.joined(separator: "/") + "\t" + String(remote.size) + "\t"
            out += (remote.modified.map { String($0) } ?? "") + "\t" + (remote.etag ?? "") + "\t"
            out += String(entry.localSize) + "\n"
        }
        return out
    }

    /// nil when the text is not a manifest this version wrote.
    public static func parse(_ text: String) -> SyncManifest? {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard lines.first == Substring(header) else { return nil }
        lines.removeFirst()
        var entries: [Entry] = []
        entries.reserveCapacity(lines.count)
        for line in lines {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 6, !fields[0].isEmpty, let size = Int64(fields[2]), size >= 0,
                let localSize = Int64(fields[5]), localSize >= 0
            else { return nil }
            let path = fields[1].split(separator: "/").map(String.init)
            guard !path.isEmpty, path.allSatisfy({ RemoteName.problem($0) == nil }),
                fields[0].split(separator: "/").allSatisfy({ RemoteName.problem(String($0)) == nil })
            else { return nil }
            let modified = fields[3].isEmpty ? nil : Int64(fields[3])
            if !fields[3].isEmpty, modified == nil { return nil }
            let remote = RemoteFile(
                path: path, size: size, modified: modified, etag: fields[4].isEmpty ? nil : String(fields[4]))
            entries.append(Entry(local: String(fields[0]), remote: remote, localSize: localSize))
        }
        return SyncManifest(entries: entries)
    }

    /// Whether the file on the server is still what the entry fetched: by tag when both have one, else by size and
    /// time (SMB and some WebDAV servers give no tag).
    public static func isUnchanged(_ entry: Entry, _ file: RemoteFile) -> Bool {
        guard entry.remote.size == file.size else { return false }
        // Compared weakly (RFC 9110 §8.8.3.2): Apache marks a tag weak while its file is less than a second old
        // and strong after, for the same file.
        if let old = entry.remote.etag, let new = file.etag { return weak(old) == weak(new) }
        return entry.remote.modified == file.modified
    }

    private static func weak(_ tag: String) -> Substring { tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag) }
}

/// HTTP's dates (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`, as WebDAV's `getlastmodified` and
/// `Retry-After` write them.
public enum HTTPDate {
    /// Seconds since 1970; nil for anything but the IMF-fixdate form every current server sends.
    public static func parse(_ text: Substring) -> Int64? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT", let day = Int(parts[1]),
            let monthIndex = months.firstIndex(of: String(parts[2])), let year = Int(parts[3]),
            (1970...9999).contains(year), (1...31).contains(day)
        else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = CivilDate.daysSince1970(year: year, month: monthIndex + 1, day: day)
        return Int64(days) * 86400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// `Retry-After`: seconds, or a date taken against `now` (seconds since 1970); nil when it is neither.
    public static func retryAfter(_ text: Substring, now: Int64) -> Int64? {
        // By scalars: "\r\n" is one Character.
        let scalars = text.unicodeScalars
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
            let last = scalars.lastIndex(where: { !isSpace($0) })
        else { return nil }
        let value = Substring(scalars[first...last])
        if let seconds = Int64(value), seconds >= 0 { return seconds }
        return parse(value).map { max($0 - now, 0) }
    }

    /// The IMF-fixdate form of `seconds` since 1970, for `If-Range`.
    public static func format(_ seconds: Int64) -> String {
        let days = Int(seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400)
        let within = Int(seconds - Int64(days) * 86400)
        let (year, month, day) = CivilDate.date(daysSince1970: days)
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(weekday), \(two(day)) \(months[month - 1]) \(year) \(two(within / 3600)):\(two(within / 60 % 60)):"
            + "\(two(within % 60)) GMT"
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}
