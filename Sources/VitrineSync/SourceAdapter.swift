import VitrineCore
import VitrinePlatform

/// One entry of a remote folder.
public struct RemoteEntry: Sendable, Equatable {
    public var name: String
    public var isFolder: Bool
    /// Bytes; nil when the server does not say (such a file is not fetched: nothing would bound it).
    public var size: Int64?
    public var modified: Int64?
    public var etag: String?

    public init(name: String, isFolder: Bool, size: Int64? = nil, modified: Int64? = nil, etag: String? = nil) {
        self.name = name
        self.isFolder = isFolder
        self.size = size
        self.modified = modified
        self.etag = etag
    }
}

/// What a kind of server must do for the sync engine: list a folder, fetch a file. Everything else (what to fetch,
/// where it goes, what goes away, resuming, the limit, the manifest) is the engine's, so another kind of server
/// (a photo service's shared album) is one more of these.
protocol SourceAdapter: AnyObject {
    /// The entries of the folder `names` below the source's location; names already checked by `RemoteName`.
    func list(_ names: [String]) throws(SyncError) -> [RemoteEntry]
    /// Writes the file into `descriptor` from byte `offset`, which holds the file's first `offset` bytes from an
    /// earlier try; returns the file's size on disk afterwards. More bytes than `file.size` are refused.
    func fetch(_ file: RemoteFile, into descriptor: Int32, from offset: Int64) throws(SyncError) -> Int64
}

/// WebDAV: Nextcloud, ownCloud, Synology, QNAP, Apache mod_dav, rclone.
final class WebDAVAdapter: SourceAdapter {
    private let location: RemoteLocation
    private let session: HTTPSession

    init(source: SourceSettings, login: LoginFile?) throws(SyncError) {
        location = source.location
        session = try HTTPSession(source: source, login: login)
    }

    func list(_ names: [String]) throws(SyncError) -> [RemoteEntry] {
        let url = location.url(below: names)
        var entries: [RemoteEntry] = []
        var seen: Set<String> = []
        for response in try session.list(url) {
            switch DAVHref.meaning(of: response.href, location: location, folder: names) {
            case .failure(let problem):
                throw SyncError(.badAnswer, url, "the folder listing \(problem.message)")
            case .success(.itself):
                continue
            case .success(.child(let name)):
                guard seen.insert(name).inserted else { continue }
                entries.append(
                    RemoteEntry(
                        name: name, isFolder: response.isFolder, size: response.size, modified: response.modified,
                        etag: response.etag))
            }
        }
        return entries
    }

    func fetch(_ file: RemoteFile, into descriptor: Int32, from offset: Int64) throws(SyncError) -> Int64 {
        // A weak tag (W/"...") cannot validate a range (RFC 9110 §13.1.5); the date can.
        let validator =
            file.etag.flatMap { $0.hasPrefix("W/") ? nil : $0 } ?? file.modified.map { HTTPDate.format($0) }
        return try session.fetch(
            location.url(below: file.path, isFolder: false), into: descriptor, from: offset, expected: file.size,
            validator: validator)
    }
}
