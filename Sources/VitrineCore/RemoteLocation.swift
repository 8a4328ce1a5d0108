/// Where a source's photos live: `https://host/remote.php/dav/files/anna/Photos/`, `smb://nas/photos/Frame`.
///
/// The path is kept as decoded names, one per folder, so a name is compared with a server's listing by its
/// characters whatever each side percent-encoded (Apache writes `%c3%a9`, rclone `%C3%A9`, a user may paste either
/// or neither).
public struct RemoteLocation: Sendable, Equatable, CustomStringConvertible {
    public enum Scheme: String, Sendable, CaseIterable {
        case http, https, smb

        public var defaultPort: Int {
            switch self {
            case .http: return 80
            case .https: return 443
            case .smb: return 445
            }
        }
    }

    public var scheme: Scheme
    /// A name or an address; an IPv6 address is kept in brackets, as URLs write it.
    public var host: String
    public var port: Int?
    /// The folders below the host, decoded. For SMB the first is the share.
    public var folders: [String]

    public init(scheme: Scheme, host: String, port: Int? = nil, folders: [String]) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.folders = folders
    }

    public var effectivePort: Int { port ?? scheme.defaultPort }

    /// `scheme://host[:port]`, as a server's absolute href must start.
    public var origin: String {
        "\(scheme.rawValue)://\(host)\(port.map { ":\($0)" } ?? "")"
    }

    /// The URL of a folder or file below this location, each name percent-encoded; folders end with a slash.
    public func url(below names: [String] = [], isFolder: Bool = true) -> String {
        let all = folders + names
        let path = all.map(Self.percentEncoded).joined(separator: "/")
        return origin + "/" + path + (isFolder && !all.isEmpty ? "/" : "")
    }

    /// The URL with nothing encoded that a person would not have typed: for messages.
    public var description: String {
        origin + "/" + folders.joined(separator: "/")
    }

    /// Why `text` is not a location for `kind`, or the location.
    public static func parse(_ text: String) -> Result<RemoteLocation, RemoteLocationProblem> {
        guard let separator = text.firstRange(of: "://") else {
            return .failure(.init("is not a URL (expected e.g. https://cloud.example.com/remote.php/dav/files/USER/)"))
        }
        guard let scheme = Scheme(rawValue: text[..<separator.lowerBound].lowercased()) else {
            return .failure(.init("has an unknown scheme (expected http://, https:// or smb://)"))
        }
        let rest = text[separator.upperBound...]
        if rest.contains(where: { $0 == "?" || $0 == "#" }) {
            return .failure(.init("must not have a query or a fragment (? or #)"))
        }
        let authority = rest.prefix { $0 != "/" }
        if authority.contains("@") {
            return .failure(
                .init("must not hold a user name or password: put them in the source's credentialsFile"))
        }
        var host = Substring(authority)
        var port: Int?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return .failure(.init("has an unclosed [ in its host")) }
            let after = host[host.index(after: close)...]
            host = host[...close]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()), (1...65535).contains(number) else {
                    return .failure(.init("has a port that is not a number from 1 to 65535"))
                }
                port = number
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let number = Int(host[host.index(after: colon)...]), (1...65535).contains(number) else {
                return .failure(.init("has a port that is not a number from 1 to 65535"))
            }
            port = number
            host = host[..<colon]
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "%" || $0 == "\\" }) else {
            return .failure(.init("has no host name"))
        }
        var folders: [String] = []
        for part in rest.dropFirst(authority.count).split(separator: "/") {
            guard let name = Self.percentDecoded(part) else {
                return .failure(.init("has a broken percent escape or a name that is not UTF-8 in its path"))
            }
            if let problem = RemoteName.problem(name) { return .failure(.init("has a folder that \(problem)")) }
            folders.append(name)
        }
        if scheme == .smb, folders.isEmpty {
            return .failure(.init("names no share (expected smb://HOST/SHARE/FOLDER)"))
        }
        return .success(RemoteLocation(scheme: scheme, host: String(host), port: port, folders: folders))
    }

    /// Percent-decoding of a URL path part; nil for a broken escape or bytes that are not UTF-8.
    public static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Everything but RFC 3986's unreserved characters and a few safe in a path is escaped.
    public static func percentEncoded(_ name: String) -> String {
        var out = ""
        out.reserveCapacity(name.utf8.count)
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(digits[Int(byte >> 4)])
                out.unicodeScalars.append(digits[Int(byte & 15)])
            }
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

public struct RemoteLocationProblem: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// One name in a remote listing, checked before it becomes part of a path in the cache: a server (or something
/// pretending to be one) decides these names, and the cache must not be left through them.
public enum RemoteName {
    /// Longest name most Linux filesystems take.
    public static let maximumBytes = 255

    /// Why `name` cannot be a file or folder name in the cache, or nil.
    public static func problem(_ name: String) -> String? {
        if name.isEmpty { return "has an empty name" }
        if name == "." || name == ".." { return "is named \(name)" }
        if name.utf8.count > maximumBytes { return "has a name longer than \(maximumBytes) bytes" }
        if name.contains("/") { return "has a / in its name" }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "has a control character in its name"
        }
        return nil
    }

    /// Names a sync passes over without a word: hidden files, and the folders NASes keep their own thumbnails and
    /// recycle bins in (Synology's `@eaDir` holds a JPEG for every photo).
    public static func isSkipped(_ name: String) -> Bool {
        name.hasPrefix(".") || name.hasPrefix("@") || name == "#recycle" || name == "#snapshot"
            || name == "$RECYCLE.BIN" || name == "System Volume Information"
    }
}
