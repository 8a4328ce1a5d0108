/// One entry of `sources` in `vitrine.json`: a remote folder mirrored into the library, which the show plays from
/// whether or not the server is there.
public struct SourceSettings: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case webdav, smb
    }

    /// Which library folder the photos go to.
    public enum Filing: Sendable, Equatable {
        /// All of them into one category, nested folders kept.
        case category(String)
        /// Each folder at the top of the remote folder is a category of the same name; photos at the top go to a
        /// category named after the source.
        case subfolders
    }

    public var name: String
    public var kind: Kind
    public var location: RemoteLocation
    /// The user name on the first line and the password on the second; nil: a guest (SMB) or no login (a public
    /// WebDAV folder).
    public var credentialsFile: String?
    /// The CA that signed an https server's certificate; nil: the system's CAs.
    public var caFile: String?
    public var filing: Filing
    /// What the cache keeps of each photo; nil: the panel's rendition on a board of 1 GiB or less, else the photo.
    public var keep: Keep?

    public enum Keep: String, Sendable, CaseIterable {
        case original, rendition
    }
    /// Seconds from the end of one sync to the start of the next.
    public var interval: Double = 900
    /// The most the cache of this source may hold; the newest photos are kept.
    public var cacheLimitMiB: Int?
    /// The most this source downloads per second; nil: no limit.
    public var bandwidthKiBps: Int?
    /// Seconds without a byte from the server before a transfer is given up (and resumed at the next try).
    public var timeout: Double = 60
    /// A Nextcloud or ownCloud public share link's token: the user name its WebDAV folder takes.
    public var shareToken: String?

    public init(name: String, kind: Kind, location: RemoteLocation, filing: Filing) {
        self.name = name
        self.kind = kind
        self.location = location
        self.filing = filing
    }

    public static let keyNames = [
        "name", "kind", "url", "credentialsFile", "caFile", "category", "subfolderCategories", "interval", "keep",
        "cacheLimitMiB", "bandwidthKiBps", "timeout",
    ]

    /// Source names become file names in the library's `.vitrine-sources` folder and parts of MQTT ids.
    public static func nameProblem(_ name: String) -> String? {
        if name.isEmpty { return "must not be empty" }
        if name.utf8.count > 64 { return "is longer than 64 bytes" }
        let allowed = name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
        }
        return allowed ? nil : "\"\(name)\" may hold only letters, digits, - and _"
    }

    /// The categories this source fills, as far as the config says (subfolders are known only from the server).
    public var categoryName: String? {
        if case .category(let name) = filing { return name }
        return nil
    }

    static func parseList(_ elements: [JSONValue], file: String) throws(ConfigError) -> [SourceSettings] {
        var sources: [SourceSettings] = []
        for (index, element) in elements.enumerated() {
            let object = try ConfigObject(element, file: file, path: "sources[\(index)]")
            let source = try parse(object)
            if sources.contains(where: { $0.name == source.name }) {
                throw object.failure("name", "\"\(source.name)\" names another source too; give each its own name")
            }
            if let category = source.categoryName, sources.contains(where: { $0.categoryName == category }) {
                throw object.failure("category", "\"\(category)\" is filled by another source too")
            }
            sources.append(source)
        }
        return sources
    }

    static func parse(_ object: ConfigObject) throws(ConfigError) -> SourceSettings {
        try object.rejectUnknownKeys(allowed: keyNames)
        let kind = try object.choice("kind", as: Kind.self)
        guard let kind else { throw object.failure("kind", "missing (expected \"webdav\" or \"smb\")") }
        let text = try object.requiredString("url")
        var location: RemoteLocation
        switch RemoteLocation.parse(text) {
        case .success(let parsed): location = parsed
        case .failure(let problem): throw object.failure("url", "\"\(text)\" \(problem.message)")
        }
        var shareToken: String?
        switch kind {
        case .webdav:
            guard location.scheme != .smb else {
                throw object.failure("url", "\"\(text)\" is an SMB share: say \"kind\": \"smb\"")
            }
            // A Nextcloud/ownCloud share link (https://host/s/TOKEN) is served over WebDAV at /public.php/webdav/
            // with the token as the user name; in a folder of its own, Nextcloud's links say index.php
            // (https://host/nextcloud/index.php/s/TOKEN).
            let folders = location.folders
            let s = folders.count - 2
            if s >= 0, folders[s] == "s", s == 0 || folders[s - 1] == "index.php" {
                shareToken = folders[s + 1]
                location.folders = Array(folders[..<max(s - 1, 0)]) + ["public.php", "webdav"]
            }
        case .smb:
            guard location.scheme == .smb else {
                throw object.failure("url", "\"\(text)\" is not an SMB share (expected smb://HOST/SHARE/FOLDER)")
            }
        }
        let filing: Filing
        let category = try object.string("category")
        let subfolders = try object.bool("subfolderCategories") ?? false
        switch (category, subfolders) {
        case (let name?, false):
            if let problem = RemoteName.problem(name) { throw object.failure("category", "the category \(problem)") }
            guard !name.hasPrefix(".") else {
                throw object.failure("category", "\"\(name)\" is hidden (starts with .), so it would never be shown")
            }
            filing = .category(name)
        case (nil, true):
            filing = .subfolders
        case (_?, true):
            throw object.failure(
                "subfolderCategories", "either one category for every photo, or one per subfolder, not both")
        case (nil, false):
            throw object.failure(
                "category", "missing: name the category the photos go to, or say \"subfolderCategories\": true")
        }
        let name: String
        if let given = try object.string("name") {
            name = given
        } else if case .category(let category) = filing, nameProblem(category) == nil {
            name = category
        } else {
            throw object.failure(
                "name", "missing: the source needs a name of letters, digits, - and _ (used in status and files)")
        }
        if let problem = nameProblem(name) { throw object.failure("name", problem) }
        var settings = SourceSettings(name: name, kind: kind, location: location, filing: filing)
        settings.shareToken = shareToken
        for key in ["credentialsFile", "caFile"] where (try object.string(key))?.isEmpty == true {
            throw object.failure(key, "must not be empty")
        }
        settings.credentialsFile = try object.string("credentialsFile")
        settings.caFile = try object.string("caFile")
        if settings.caFile != nil, location.scheme != .https {
            throw object.failure("caFile", "a CA is for https:// servers only")
        }
        settings.interval = try object.number("interval", in: 1...604_800) ?? settings.interval
        settings.keep = try object.choice("keep", as: Keep.self)
        settings.cacheLimitMiB = try object.integer("cacheLimitMiB", in: 1...16_777_216)
        settings.bandwidthKiBps = try object.integer("bandwidthKiBps", in: 1...10_485_760)
        settings.timeout = try object.number("timeout", in: 1...3600) ?? settings.timeout
        return settings
    }

    func resolved(relativeTo base: String) -> SourceSettings {
        var settings = self
        settings.credentialsFile = credentialsFile.map { PathText.resolve($0, relativeTo: base) }
        settings.caFile = caFile.map { PathText.resolve($0, relativeTo: base) }
        return settings
    }
}
