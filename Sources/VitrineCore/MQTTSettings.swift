/// `mqtt` in `vitrine.json`: the broker, who this player is on it, and what it publishes.
public struct MQTTSettings: Sendable, Equatable {
    public struct TLS: Sendable, Equatable {
        /// The CA that signed the broker's certificate; nil trusts the system's CAs (`/etc/ssl/certs`).
        public var caFile: String?
        /// A client certificate and its key, for brokers that ask for one.
        public var certFile: String?
        public var keyFile: String?

        public init(caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil) {
            self.caFile = caFile
            self.certFile = certFile
            self.keyFile = keyFile
        }
    }

    public var host: String
    public var port: Int
    /// The player's name on the broker; nil means the hostname.
    public var id: String?
    public var prefix = "vitrine"
    /// Fleet groups this player takes commands for, besides `PREFIX/all/cmd`.
    public var groups: [String] = []
    /// A file with the user name on its first line and the password on its second; must not be readable by others.
    public var credentialsFile: String?
    public var tls: TLS?
    /// The slide on screen as a small JPEG on `PREFIX/ID/image`.
    public var image = false
    /// Seconds between pings when nothing else is sent; the broker declares the player gone after 1.5 times this.
    public var keepAlive = 30
    public var discovery = true
    public var discoveryPrefix = "homeassistant"
    /// What each kind of command topic may ask: the player's own topic, its groups' and the fleet's (`all`). Anyone
    /// who may publish on a fleet topic reaches every frame, so by default those only steer.
    public var commands = Commands()

    public struct Commands: Sendable, Equatable {
        /// The kinds of command topic, named as their keys in `mqtt.commands`.
        public enum Topic: String, Sendable, CaseIterable {
            case own, groups, fleet

            /// The config key that says what this kind of topic may ask, for refusals.
            public var settingName: String { "mqtt.commands.\(rawValue)" }
        }

        public var own = CommandAuthority.admin
        public var groups = CommandAuthority.steer
        public var fleet = CommandAuthority.steer
        public init() {}
        public static let keyNames = Topic.allCases.map(\.rawValue)

        public subscript(topic: Topic) -> CommandAuthority {
            get {
                switch topic {
                case .own: return own
                case .groups: return groups
                case .fleet: return fleet
                }
            }
            set {
                switch topic {
                case .own: own = newValue
                case .groups: groups = newValue
                case .fleet: fleet = newValue
                }
            }
        }
    }

    public init(host: String, port: Int? = nil, tls: TLS? = nil) {
        self.host = host
        self.tls = tls
        self.port = port ?? (tls == nil ? 1883 : 8883)
    }

    public static let keyNames = [
        "host", "port", "id", "prefix", "groups", "credentialsFile", "tls", "image", "keepAlive", "homeAssistant",
        "commands",
    ]
    public static let tlsKeyNames = ["caFile", "certFile", "keyFile"]
    public static let homeAssistantKeyNames = ["discovery", "prefix"]
    /// Longest id, group or prefix: topics stay short enough for any broker's limits and a log line.
    public static let maximumNameLength = 64

    /// Why `name` cannot be one level of a topic, or nil when it can: the wildcards and the level separator
    /// would make the player subscribe to, or publish on, topics it does not own.
    public static func topicLevelProblem(_ name: String) -> String? {
        if name.isEmpty { return "must not be empty" }
        if name.utf8.count > maximumNameLength { return "is longer than \(maximumNameLength) bytes" }
        if name.contains(where: { $0 == "/" || $0 == "+" || $0 == "#" }) {
            return "\"\(name)\" must not contain /, + or # (it is one level of a topic)"
        }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "must not contain control characters"
        }
        return nil
    }

    static func parse(_ object: ConfigObject) throws(ConfigError) -> MQTTSettings {
        try object.rejectUnknownKeys(allowed: keyNames)
        let host = try object.requiredString("host")
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" }) else {
            throw object.failure("host", "\"\(host)\" is not a host name or address (expected e.g. broker.lan)")
        }
        var tls: TLS?
        if let section = try object.object("tls") {
            try section.rejectUnknownKeys(allowed: tlsKeyNames)
            tls = TLS(
                caFile: try section.string("caFile"), certFile: try section.string("certFile"),
                keyFile: try section.string("keyFile"))
            if (tls?.certFile == nil) != (tls?.keyFile == nil) {
                throw section.failure(
                    tls?.certFile == nil ? "certFile" : "keyFile",
                    "a client certificate needs both certFile and keyFile")
            }
            for key in tlsKeyNames where (try section.string(key))?.isEmpty == true {
                throw section.failure(key, "must not be empty")
            }
        }
        var settings = MQTTSettings(host: host, port: try object.integer("port", in: 1...65535), tls: tls)
        if let id = try object.string("id") {
            if let problem = topicLevelProblem(id) { throw object.failure("id", problem) }
            guard id != "all", id != "group" else {
                throw object.failure("id", "\"\(id)\" is taken by the fleet's topics (PREFIX/all, PREFIX/group)")
            }
            settings.id = id
        }
        if let prefix = try object.string("prefix") {
            let levels = prefix.split(separator: "/", omittingEmptySubsequences: false)
            if let problem = levels.lazy.compactMap({ topicLevelProblem(String($0)) }).first {
                throw object.failure("prefix", "\"\(prefix)\": each level \(problem)")
            }
            guard !prefix.hasPrefix("$") else {
                throw object.failure("prefix", "must not start with $ (broker topics)")
            }
            settings.prefix = prefix
        }
        for (index, group) in (try object.stringList("groups") ?? []).enumerated() {
            if let problem = topicLevelProblem(group) {
                throw ConfigError(
                    file: object.file, line: object["groups"]?.line, path: "\(object.childPath("groups"))[\(index)]",
                    message: problem)
            }
            if !settings.groups.contains(group) { settings.groups.append(group) }
        }
        if let credentials = try object.string("credentialsFile") {
            guard !credentials.isEmpty else { throw object.failure("credentialsFile", "must not be empty") }
            settings.credentialsFile = credentials
        }
        if let commands = try object.object("commands") {
            try commands.rejectUnknownKeys(allowed: Commands.keyNames)
            for topic in Commands.Topic.allCases {
                if let authority = try commands.choice(topic.rawValue, as: CommandAuthority.self) {
                    settings.commands[topic] = authority
                }
            }
        }
        settings.image = try object.bool("image") ?? false
        settings.keepAlive = try object.integer("keepAlive", in: 5...3600) ?? settings.keepAlive
        if let homeAssistant = try object.object("homeAssistant") {
            try homeAssistant.rejectUnknownKeys(allowed: homeAssistantKeyNames)
            settings.discovery = try homeAssistant.bool("discovery") ?? true
            if let prefix = try homeAssistant.string("prefix") {
                if let problem = topicLevelProblem(prefix) { throw homeAssistant.failure("prefix", problem) }
                settings.discoveryPrefix = prefix
            }
        }
        // Home Assistant's ids take letters, digits, _ and - only, and the others become _: "hall.frame" and
        // "hall_frame" would be one device there, each frame's entities overwriting the other's.
        if settings.discovery, let id = settings.id, MQTTTopics.idSafe(id) != id {
            throw object.failure(
                "id",
                "\"\(id)\" would be \"vitrine_\(MQTTTopics.idSafe(id))\" in Home Assistant, as would any id that "
                    + "differs only in characters other than letters, digits, _ and -; use only those (or turn "
                    + "homeAssistant.discovery off)")
        }
        return settings
    }

    /// Relative file paths taken from the config file's folder.
    func resolved(relativeTo base: String) -> MQTTSettings {
        var settings = self
        settings.credentialsFile = credentialsFile.map { PathText.resolve($0, relativeTo: base) }
        settings.tls?.caFile = tls?.caFile.map { PathText.resolve($0, relativeTo: base) }
        settings.tls?.certFile = tls?.certFile.map { PathText.resolve($0, relativeTo: base) }
        settings.tls?.keyFile = tls?.keyFile.map { PathText.resolve($0, relativeTo: base) }
        return settings
    }
}
