import Testing

@testable import VitrineCore

/// The MQTT side that needs no broker: the settings, the topics, the backoff, the state's pacing and the
/// discovery payloads Home Assistant reads.
@Suite struct MQTTTests {
    static func settings(_ mqtt: String) throws(ConfigError) -> MQTTSettings? {
        try Settings.parse("{\n\"mqtt\": \(mqtt)\n}", file: "frame.json").mqtt
    }

    static func refusal(_ mqtt: String) -> String {
        do {
            _ = try settings(mqtt)
            return "accepted"
        } catch {
            return error.description
        }
    }

    @Test func theDefaultsAreTheCommonBrokerSetup() throws {
        let plain = try #require(try Self.settings("{\"host\": \"broker.lan\"}"))
        #expect(plain.port == 1883)
        #expect(plain.prefix == "vitrine")
        #expect(plain.id == nil)
        #expect(plain.discovery && plain.discoveryPrefix == "homeassistant")
        #expect(!plain.image)
        let tls = try #require(try Self.settings("{\"host\": \"broker.lan\", \"tls\": {\"caFile\": \"ca.pem\"}}"))
        #expect(tls.port == 8883)
        #expect(tls.tls?.caFile == "ca.pem")
        let groups = try #require(try Self.settings("{\"host\": \"b\", \"groups\": \"lobby\"}"))
        #expect(groups.groups == ["lobby"])
    }

    @Test func settingsThatWouldLeaveThePlayersTopicsAreRefusedWithTheField() {
        #expect(Self.refusal("{}").hasPrefix("frame.json:2: mqtt.host: missing"))
        #expect(
            Self.refusal("{\"host\": \"b\", \"id\": \"a/b\"}").contains("mqtt.id: \"a/b\" must not contain /, + or #"))
        #expect(Self.refusal("{\"host\": \"b\", \"id\": \"all\"}").contains("mqtt.id: \"all\" is taken"))
        #expect(Self.refusal("{\"host\": \"b\", \"groups\": [\"ok\", \"#\"]}").contains("mqtt.groups[1]:"))
        #expect(Self.refusal("{\"host\": \"b\", \"prefix\": \"a//b\"}").contains("mqtt.prefix:"))
        #expect(Self.refusal("{\"host\": \"b\", \"port\": 0}").contains("mqtt.port: 0 is out of range"))
        #expect(
            Self.refusal("{\"host\": \"b\", \"tls\": {\"certFile\": \"c.pem\"}}").contains(
                "mqtt.tls.keyFile: a client certificate needs both"))
        #expect(Self.refusal("{\"host\": \"b\", \"user\": \"x\"}").contains("mqtt.user: unknown key"))
    }

    /// `hall.frame` and `hall_frame` are one device in Home Assistant (its ids take letters, digits, _ and -):
    /// refused at start, naming the line and field, unless discovery is off.
    @Test func idsThatCollideInHomeAssistantAreRefused() throws {
        for id in ["hall.frame", "küche", "frame 2", "a:b"] {
            let refusal = Self.refusal("{\"host\": \"b\", \"id\": \"\(id)\"}")
            #expect(refusal.hasPrefix("frame.json:2: mqtt.id: \"\(id)\" would be \"vitrine_"), "\(refusal)")
        }
        #expect(try Self.settings("{\"host\": \"b\", \"id\": \"hall_frame-2\"}")?.id == "hall_frame-2")
        let off = try Self.settings(
            "{\"host\": \"b\", \"id\": \"hall.frame\", \"homeAssistant\": {\"discovery\": false}}")
        #expect(off?.id == "hall.frame")
    }

    @Test func relativeFilesAreTakenFromTheConfigFolder() throws {
        let settings = MQTTSettings(host: "b", tls: MQTTSettings.TLS(caFile: "ca.pem"))
        var withCredentials = settings
        withCredentials.credentialsFile = "mqtt.secret"
        let resolved = withCredentials.resolved(relativeTo: "/etc/vitrine")
        #expect(resolved.credentialsFile == "/etc/vitrine/mqtt.secret")
        #expect(resolved.tls?.caFile == "/etc/vitrine/ca.pem")
    }

    /// What each command topic may ask: the player's own everything, the fleet's and the groups' only steering.
    @Test func commandsHaveTheAuthorityOfTheirTopic() throws {
        let plain = try #require(try Self.settings("{\"host\": \"b\", \"id\": \"f\", \"groups\": [\"hall\"]}"))
        let topics = MQTTTopics(plain, hostname: "x")
        #expect(topics.commandKind(of: "vitrine/f/cmd").map { plain.commands[$0] } == .admin)
        #expect(topics.commandKind(of: "vitrine/all/cmd").map { plain.commands[$0] } == .steer)
        #expect(topics.commandKind(of: "vitrine/group/hall/cmd").map { plain.commands[$0] } == .steer)
        #expect(topics.commandKind(of: "vitrine/group/other/cmd") == nil)
        #expect(!CommandAuthority.steer.permits(.rotateToken) && !CommandAuthority.steer.permits(.reload))
        #expect(CommandAuthority.steer.permits(.category(.named("A"))) && CommandAuthority.steer.permits(.status))
        #expect(!CommandAuthority.none.permits(.status))
        let open = try #require(
            try Self.settings("{\"host\": \"b\", \"commands\": {\"fleet\": \"admin\", \"own\": \"none\"}}"))
        #expect(open.commands.fleet == .admin && open.commands.own == .none && open.commands.groups == .steer)
        #expect(
            Self.refusal("{\"host\": \"b\", \"commands\": {\"fleet\": \"root\"}}").contains(
                "mqtt.commands.fleet: \"root\" is not allowed"))
        #expect(Self.refusal("{\"host\": \"b\", \"commands\": {\"all\": \"steer\"}}").contains("unknown key"))
    }

    /// Names as Home Assistant's select sends them: JSON-quoted, any name at all.
    @Test func quotedCategoryNamesAreTakenExactly() {
        #expect(ControlCommand.parse("category \"next\"") == .category(.named("next")))
        #expect(ControlCommand.parse("category next") == .category(.next))
        #expect(ControlCommand.parse("category \" Beach \"") == .category(.named(" Beach ")))
        #expect(ControlCommand.parse("category \"\\u00c9t\\u00e9\"") == .category(.named("\u{C9}t\u{E9}")))
        #expect(ControlCommand.parse("category \"\"") == .category(.named("")))
        #expect(ControlCommand.parse("category \"say \\\"hi\\\"\"") == .category(.named("say \"hi\"")))
        #expect(ControlCommand.parse("category \"unterminated") == nil)
    }

    @Test func theTopicsFollowThePrefixIdAndGroups() {
        let topics = MQTTTopics(prefix: "shop/screens", id: "till-2", groups: ["lobby"])
        #expect(topics.state == "shop/screens/till-2/state")
        #expect(
            topics.commandTopics == ["shop/screens/till-2/cmd", "shop/screens/all/cmd", "shop/screens/group/lobby/cmd"])
        #expect(
            topics.discoveryTopic(component: "switch", object: "pause")
                == "homeassistant/switch/vitrine_till-2/pause/config")
        #expect(MQTTTopics.id(hostname: "frame.lan") == "frame")
        #expect(MQTTTopics.id(hostname: "") == "vitrine")
        #expect(MQTTTopics(prefix: "v", id: "kitchen.frame").nodeID == "vitrine_kitchen_frame")
    }

    /// The backoff doubles from 1 s to a 60 s cap, each wait within 20 % of it, and a broker that keeps refusing
    /// is one log line, not one per try.
    @Test func failuresBackOffWithJitterAndLogOncePerReason() {
        var connection = BrokerConnection(broker: "b:1883", seed: 7)
        #expect(connection.start() == [.connect])
        var now = 0.0
        var warnings = 0
        var waits: [Double] = []
        for _ in 0..<10 {
            let actions = connection.failed("Connection refused", now: now)
            for action in actions {
                switch action {
                case .warn: warnings += 1
                case .arm(let at):
                    waits.append(at - now)
                    now = at
                default: break
                }
            }
            #expect(connection.timerFired(now: now) == [.connect])
        }
        #expect(warnings == 1)
        let expected: [Double] = [1, 2, 4, 8, 16, 32, 60, 60, 60, 60]
        for (wait, base) in zip(waits, expected) {
            #expect(wait >= base * 0.8 && wait <= base * 1.2, "\(wait) for \(base)")
        }
        #expect(Set(waits.suffix(4)).count > 1, "the jitter spreads a fleet's retries")
        // A new reason is worth a line; success resets the backoff and says how long it took.
        #expect(connection.failed("not authorised", now: now).contains { if case .warn = $0 { true } else { false } })
        _ = connection.timerFired(now: now + 100)
        #expect(connection.connected() == [.log("MQTT: connected to b:1883 after 11 failed attempts"), .announce])
        let lost = connection.failed("The connection was lost.", now: 200)
        #expect(lost.first == .warn("MQTT: lost b:1883 (The connection was lost.); reconnecting, the show goes on"))
        guard case .arm(let at)? = lost.last else {
            Issue.record("no retry armed")
            return
        }
        #expect(at - 200 <= 1.2)
        #expect(connection.timerFired(now: at - 0.5).isEmpty, "not before its time")
        _ = connection.timerFired(now: at)
        #expect(connection.connected() == [.log("MQTT: connected again to b:1883"), .announce])
        #expect(connection.reconnects == 1)
    }

    @Test func stateIsSpacedButTheNewestIsNeverLost() {
        var publisher = StatePublisher()
        #expect(publisher.offer("a", now: 0) == .publish("a"))
        #expect(publisher.offer("a", now: 1) == .nothing)
        #expect(publisher.offer("b", now: 1.1) == .publish("b"))
        #expect(publisher.offer("c", now: 1.2) == .wait(until: 1.35))
        #expect(publisher.offer("d", now: 1.3) == .nothing)
        #expect(publisher.timerFired(now: 1.2) == nil)
        #expect(publisher.timerFired(now: 1.35) == "d")
        // Back to what was last sent while held: nothing is due.
        #expect(publisher.offer("e", now: 1.4) == .wait(until: 1.6))
        #expect(publisher.offer("d", now: 1.45) == .nothing)
        #expect(publisher.timerFired(now: 1.6) == nil)
        publisher.reset()
        #expect(publisher.offer("d", now: 1.61) == .publish("d"))
    }

    static func object(_ payload: String) throws -> [String: JSONValue] {
        members(try JSONParser.parse(payload))
    }

    static func members(_ value: JSONValue?) -> [String: JSONValue] {
        guard case .object(let members)? = value?.kind else { return [:] }
        return Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// Each component carries the keys Home Assistant requires of it, one device ties them together, and the
    /// select's options are the library's categories.
    @Test func discoveryCarriesWhatHomeAssistantRequires() throws {
        let topics = MQTTTopics(prefix: "vitrine", id: "frame")
        let device = HomeAssistantDiscovery.Device(name: "Vitrine frame", model: "pi-7in", version: "0.1.0")
        let messages = HomeAssistantDiscovery.messages(
            topics: topics, device: device, categories: ["", "Beach", "Snow"], image: false)
        let required: [String: [String]] = [
            "button": ["command_topic", "payload_press"], "switch": ["command_topic", "state_topic"],
            "select": ["command_topic", "options"], "sensor": ["state_topic"], "number": ["command_topic"],
        ]
        var components: Set<String> = []
        for message in messages where !message.payload.isEmpty {
            let component = String(message.topic.split(separator: "/")[1])
            components.insert(component)
            let fields = try Self.object(message.payload)
            for key in (required[component] ?? []) + ["unique_id", "name", "device", "availability_topic"] {
                #expect(fields[key] != nil, "\(message.topic) lacks \(key)")
            }
            let deviceFields = Self.members(fields["device"])
            #expect(deviceFields["model"]?.kind == .string("pi-7in"))
            #expect(deviceFields["sw_version"]?.kind == .string("0.1.0"))
        }
        #expect(components == ["button", "switch", "select", "sensor", "number"])
        let select = try #require(messages.first { $0.topic == "homeassistant/select/vitrine_frame/category/config" })
        // The library root is "/", which no folder can be called; the command quotes the name as JSON.
        #expect(select.payload.contains("\"options\":[\"/\",\"Beach\",\"Snow\"]"))
        #expect(select.payload.contains("value | tojson"))
        let rootOnly = HomeAssistantDiscovery.messages(topics: topics, device: device, categories: [""], image: false)
        #expect(rootOnly.first { $0.topic.contains("/select/") }?.payload.contains("\"options\":[\"/\"]") == true)
        // No categories: the select is removed (an empty retained payload), as is the image entity when off.
        let bare = HomeAssistantDiscovery.messages(topics: topics, device: device, categories: [], image: false)
        #expect(bare.first { $0.topic.contains("/select/") }?.payload == "")
        #expect(bare.first { $0.topic.contains("/image/") }?.payload == "")
        let withImage = HomeAssistantDiscovery.messages(topics: topics, device: device, categories: [], image: true)
        let image = try #require(withImage.first { $0.topic.contains("/image/") })
        #expect(try Self.object(image.payload)["image_topic"]?.kind == .string("vitrine/frame/image"))
    }

    /// With several screens each output's show is a device of its own, linked to the player's: its entities read its
    /// state topic and send to its command topic, while availability and replies stay the player's.
    @Test func eachOutputIsADeviceWithItsOwnTopics() throws {
        let player = MQTTTopics(prefix: "shop", id: "till", groups: ["lobby"])
        let menu = player.forOutput("menu")
        #expect(menu.state == "shop/till/menu/state")
        #expect(menu.command == "shop/till/menu/cmd")
        #expect(menu.availability == "shop/till/availability")
        #expect(menu.reply == "shop/till/reply")
        #expect(menu.nodeID == "vitrine_till_menu")
        #expect(MQTTTopics(player: menu) == player)
        let device = HomeAssistantDiscovery.Device(name: "Vitrine till menu", model: "hdmi-1080p", version: "0.1.0")
        let messages = HomeAssistantDiscovery.messages(
            topics: menu, device: device, categories: ["Menu"], image: false)
        let pause = try #require(messages.first { $0.topic == "homeassistant/switch/vitrine_till_menu/pause/config" })
        let fields = try Self.object(pause.payload)
        #expect(fields["command_topic"]?.kind == .string("shop/till/menu/cmd"))
        #expect(fields["state_topic"]?.kind == .string("shop/till/menu/state"))
        #expect(fields["availability_topic"]?.kind == .string("shop/till/availability"))
        #expect(fields["unique_id"]?.kind == .string("vitrine_till_menu_pause"))
        let deviceFields = Self.members(fields["device"])
        #expect(deviceFields["via_device"]?.kind == .string("vitrine_till"))
        #expect(deviceFields["name"]?.kind == .string("Vitrine till menu"))
        // The player's own device is tied to nothing.
        let own = HomeAssistantDiscovery.messages(topics: player, device: device, categories: [], image: false)
        #expect(own.allSatisfy { !$0.payload.contains("via_device") })
    }

    @Test func theStateSaysWhatADashboardShows() {
        var state = MQTTState(
            category: "Beach", slide: "a \"quoted\" name", position: 3, count: 12, paused: [.user], screenOn: false,
            present: true, interval: 7.5, profile: "pi-7in", version: "0.1.0")
        state.why = SelectionReason.onThisDay.rawValue
        state.favourite = true
        #expect(
            state.json
                == "{\"category\":\"Beach\",\"slide\":\"a \\\"quoted\\\" name\",\"position\":3,\"count\":12,"
                + "\"why\":\"on this day\",\"favourite\":true,\"paused\":[\"user\"],\"screen\":\"off\",\"presence\":\"present\",\"interval\":7.5,"
                + "\"profile\":\"pi-7in\",\"version\":\"0.1.0\"}")
        var synced = state
        synced.sources = [
            MQTTState.Source(name: "family", state: "syncing", progress: (3, 200)),
            MQTTState.Source(name: "nas", state: "offline"),
        ]
        #expect(
            synced.json.hasSuffix(
                ",\"version\":\"0.1.0\",\"sources\":[{\"name\":\"family\",\"state\":\"syncing\",\"done\":3,"
                    + "\"total\":200},{\"name\":\"nas\",\"state\":\"offline\"}]}"))
        var further = synced
        further.sources[0].progress = (4, 200)
        #expect(further != synced, "progress is a change the broker hears of")
    }

    @Test func intervalIsACommandWithTheConfigsRange() {
        #expect(ControlCommand.parse("interval 2.5") == .interval(2.5))
        #expect(ControlCommand.parse("interval 0.01") == nil)
        #expect(ControlCommand.parse("interval 86401") == nil)
        #expect(ControlCommand.parse("interval nan") == nil)
        #expect(ControlCommand.parse("interval") == nil)
        #expect(
            ControlCommand.refusal("interval 0")
                == "\"interval 0\": interval takes seconds from 0.05 to 86400, e.g. interval 12.5")
        #expect(ControlCommand.refusal("jump 3").hasPrefix("unknown command \"jump 3\" (commands: next, prev"))
        var player = Player(options: Player.Options(interval: 10))
        _ = player.handle(.start(categories: ["A"], now: 0))
        let actions = player.handle(.command(.interval(3), now: 1))
        #expect(PlayerTests.text(actions) == ["log interval 3.000 s from the next slide"])
        #expect(player.options.interval == 3)
    }
}

/// Which version the next CONNECT speaks, against the ways brokers of 3.1.1 only answer MQTT 5.
@Suite struct MQTTVersionChoiceTests {
    /// Mosquitto 1.x refuses 5 by its CONNACK: 3.1.1 for good, whatever happens after.
    @Test func aRefusalIsForGood() {
        var choice = MQTTVersionChoice()
        #expect(choice.version5)
        let first = choice.refused()
        #expect(first)
        #expect(!choice.version5)
        let unanswered = choice.ended(answered: false, silent: true)
        let lost = choice.ended(answered: true, silent: false)
        #expect(unanswered == nil && lost == nil)
        #expect(!choice.version5)
        let again = choice.refused()
        #expect(!again)
    }

    /// amqtt never answers 5: 3.1.1 next, said once; a broker that answers neither (stopped for a while) gets the
    /// versions in turn, silently; a 3.1.1 connection made so, once lost, tries 5 again.
    @Test func noAnswerTriesTheOtherVersionInTurn() {
        var choice = MQTTVersionChoice()
        let note = choice.ended(answered: false, silent: true)
        #expect(note?.contains("the next attempt speaks MQTT 3.1.1") == true)
        #expect(!choice.version5)
        // Unanswered in turn (a broker stopped for a while): the versions alternate, silently.
        var notes: [String?] = []
        var versions: [Bool] = []
        for answered in [false, false, true, true] {
            notes.append(choice.ended(answered: answered, silent: !answered))
            versions.append(choice.version5)
        }
        #expect(notes.allSatisfy { $0 == nil })
        // 3.1.1 unanswered: 5; 5 unanswered: 3.1.1; that 3.1.1 connection lost: 5 first again; a connection of 5
        // lost has nothing to do with the version.
        #expect(versions == [true, false, true, true])
    }

    /// An error before the CONNACK (a TLS failure, a reset) says nothing about the version: MQTT 5 stays.
    @Test func anErrorIsNoReasonToFallBack() {
        var choice = MQTTVersionChoice()
        let note = choice.ended(answered: false, silent: false)
        #expect(note == nil)
        #expect(choice.version5)
    }
}
