/// `web` in `vitrine.json`: the web remote a phone opens to steer the frame and add photos. Off unless the section
/// is there.
public struct WebSettings: Sendable, Equatable {
    /// An IPv4 address to listen on: 0.0.0.0 for every network the frame is on, 127.0.0.1 behind a reverse proxy.
    public var address = "0.0.0.0"
    public var port = 8080
    /// A certificate and its key (PEM) for HTTPS.
    public var certFile: String?
    public var keyFile: String?
    /// The largest photo taken in one upload.
    public var uploadLimitMiB = 100
    /// Uploads that would leave less free space than this on the library's disk are refused.
    public var freeSpaceFloorMiB = 256
    /// The page's files; nil: the ones installed with the player.
    public var pages: String?
    /// The address put in the pairing QR code (e.g. `http://frame.lan:8080`); nil: the frame's first network
    /// address and the port.
    public var publicURL: String?
    /// What a paired phone may ask through `/api/command` and `/api/token`.
    public var commands = CommandAuthority.admin

    public init() {}

    public static let keyNames = [
        "address", "port", "certFile", "keyFile", "uploadLimitMiB", "freeSpaceFloorMiB", "pages", "publicURL",
        "commands",
    ]

    static func parse(_ object: ConfigObject) throws(ConfigError) -> WebSettings {
        try object.rejectUnknownKeys(allowed: keyNames)
        var settings = WebSettings()
        if let address = try object.string("address") {
            let parts = address.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else {
                throw object.failure(
                    "address",
                    "\"\(address)\" is not an IPv4 address (0.0.0.0 for every network, 127.0.0.1 for this "
                        + "machine only)")
            }
            settings.address = address
        }
        settings.port = try object.integer("port", in: 1...65535) ?? settings.port
        settings.certFile = try object.string("certFile")
        settings.keyFile = try object.string("keyFile")
        if (settings.certFile == nil) != (settings.keyFile == nil) {
            throw object.failure(
                settings.certFile == nil ? "certFile" : "keyFile", "HTTPS needs both certFile and keyFile")
        }
        for key in ["certFile", "keyFile", "pages"] where (try object.string(key))?.isEmpty == true {
            throw object.failure(key, "must not be empty")
        }
        settings.uploadLimitMiB = try object.integer("uploadLimitMiB", in: 1...4096) ?? settings.uploadLimitMiB
        settings.freeSpaceFloorMiB = try object.integer("freeSpaceFloorMiB", in: 0...1_048_576) ?? 256
        settings.pages = try object.string("pages")
        settings.commands = try object.choice("commands", as: CommandAuthority.self) ?? settings.commands
        if let url = try object.string("publicURL") {
            guard url.hasPrefix("http://") || url.hasPrefix("https://"), !url.contains(" ") else {
                throw object.failure("publicURL", "\"\(url)\" is not an http:// or https:// address")
            }
            settings.publicURL = url.hasSuffix("/") ? String(url.dropLast()) : url
        }
        return settings
    }

    /// Relative file paths taken from the config file's folder.
    func resolved(relativeTo base: String) -> WebSettings {
        var settings = self
        settings.certFile = certFile.map { PathText.resolve($0, relativeTo: base) }
        settings.keyFile = keyFile.map { PathText.resolve($0, relativeTo: base) }
        settings.pages = pages.map { PathText.resolve($0, relativeTo: base) }
        return settings
    }
}
