/// Every topic one player uses on the broker, from the prefix and its id. With several screens (`outputs`), each
/// output's show has its own state and command topics under the player's (`PREFIX/ID/NAME/state`, `.../cmd`) and
/// its own Home Assistant device, while availability, replies and the fleet's topics stay the player's.
public struct MQTTTopics: Sendable, Equatable {
    public let prefix: String
    public let id: String
    public let groups: [String]
    public let discoveryPrefix: String
    /// The output these topics are for; nil for the player's own.
    public private(set) var output: String?

    public init(prefix: String, id: String, groups: [String] = [], discoveryPrefix: String = "homeassistant") {
        self.prefix = prefix
        self.id = id
        self.groups = groups
        self.discoveryPrefix = discoveryPrefix
    }

    public init(_ settings: MQTTSettings, hostname: String) {
        self.init(
            prefix: settings.prefix, id: settings.id ?? Self.id(hostname: hostname), groups: settings.groups,
            discoveryPrefix: settings.discoveryPrefix)
    }

    /// The player's own topics, of which `topics` may be an output's.
    public init(player topics: MQTTTopics) {
        self = topics
        output = nil
    }

    /// One output's topics: its state, commands and Home Assistant device.
    public func forOutput(_ name: String) -> MQTTTopics {
        var topics = self
        topics.output = name
        return topics
    }

    private var base: String { output.map { "\(prefix)/\(id)/\($0)" } ?? "\(prefix)/\(id)" }
    public var state: String { "\(base)/state" }
    public var availability: String { "\(prefix)/\(id)/availability" }
    public var command: String { "\(base)/cmd" }
    public var reply: String { "\(prefix)/\(id)/reply" }
    public var image: String { "\(base)/image" }
    public var fleetCommand: String { "\(prefix)/all/cmd" }
    public func groupCommand(_ group: String) -> String { "\(prefix)/group/\(group)/cmd" }
    /// The topics whose messages are commands for this player.
    public var commandTopics: [String] { [command, fleetCommand] + groups.map(groupCommand) }

    /// Which kind of this player's command topics `topic` is (its `mqtt.commands` key), or nil for none of them.
    public func commandKind(of topic: String) -> MQTTSettings.Commands.Topic? {
        if topic == command { return .own }
        if topic == fleetCommand { return .fleet }
        if groups.contains(where: { groupCommand($0) == topic }) { return .groups }
        return nil
    }
    /// Home Assistant says `online` here when it starts, and wants the discovery messages again.
    public var homeAssistantStatus: String { "\(discoveryPrefix)/status" }

    /// Home Assistant's node and object ids allow only letters, digits, `_` and `-`.
    public var nodeID: String { "vitrine_" + Self.idSafe(id) + (output.map { "_" + Self.idSafe($0) } ?? "") }

    public func discoveryTopic(component: String, object: String) -> String {
        "\(discoveryPrefix)/\(component)/\(nodeID)/\(object)/config"
    }

    /// A hostname as an id: the first label (a board is `frame` on the broker, not `frame.lan`), "vitrine" when
    /// there is none.
    public static func id(hostname: String) -> String {
        let label = hostname.prefix { $0 != "." }
        let safe = String(label).filter { $0 != "/" && $0 != "+" && $0 != "#" && !$0.isWhitespace }
        return safe.isEmpty || safe == "all" || safe == "group" ? "vitrine" : String(safe.prefix(64))
    }

    static func idSafe(_ text: String) -> String {
        String(
            text.unicodeScalars.map { scalar in
                let value = scalar.value
                let allowed =
                    (0x30...0x39).contains(value) || (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value)
                    || scalar == "_" || scalar == "-"
                return allowed ? Character(scalar) : "_"
            })
    }
}
