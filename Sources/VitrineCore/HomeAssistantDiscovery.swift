/// The retained config messages that make a player appear in Home Assistant as one device with its controls
/// (https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery); with several screens, one device more for
/// each output's show (its topics from `MQTTTopics.forOutput`).
public enum HomeAssistantDiscovery {
    public struct Message: Equatable, Sendable {
        public var topic: String
        public var payload: String
    }

    public struct Device: Sendable {
        public var name: String
        public var model: String
        public var version: String

        public init(name: String, model: String, version: String) {
            self.name = name
            self.model = model
            self.version = version
        }
    }

    /// The interval Home Assistant's number entity offers; the command itself takes more.
    public static let intervalRange = (minimum: 1, maximum: 3600)

    /// Every entity's config: categories feed the select's options (no select without categories, as Home
    /// Assistant refuses a select with none); `image` adds the image entity. An entity the player does not have
    /// gets an empty payload, which removes one an earlier run announced.
    public static func messages(
        topics: MQTTTopics, device: Device, categories: [String], image: Bool
    ) -> [Message] {
        var messages: [Message] = []
        func add(_ component: String, _ object: String, _ name: String, _ fields: [(String, String)]) {
            let common: [(String, String)] = [
                ("name", JSONText.quote(name)),
                ("unique_id", JSONText.quote("\(topics.nodeID)_\(object)")),
                ("object_id", JSONText.quote("\(topics.nodeID)_\(object)")),
                ("availability_topic", JSONText.quote(topics.availability)),
                ("payload_available", "\"online\""),
                ("payload_not_available", "\"offline\""),
                ("device", deviceJSON(topics: topics, device: device)),
            ]
            let body = (common + fields).map { "\(JSONText.quote($0.0)):\($0.1)" }.joined(separator: ",")
            messages.append(
                Message(topic: topics.discoveryTopic(component: component, object: object), payload: "{\(body)}"))
        }
        let command = ("command_topic", JSONText.quote(topics.command))
        let state = ("state_topic", JSONText.quote(topics.state))
        add("button", "next", "Next", [command, ("payload_press", "\"next\""), ("icon", "\"mdi:skip-next\"")])
        add(
            "button", "previous", "Previous",
            [command, ("payload_press", "\"prev\""), ("icon", "\"mdi:skip-previous\"")])
        add(
            "switch", "screen", "Screen",
            [
                command, state, ("payload_on", "\"screen on\""), ("payload_off", "\"screen off\""),
                ("value_template", JSONText.quote("{{ value_json.screen }}")), ("state_on", "\"on\""),
                ("state_off", "\"off\""), ("icon", "\"mdi:monitor\""),
            ])
        add(
            "switch", "pause", "Pause",
            [
                command, state, ("payload_on", "\"pause\""), ("payload_off", "\"resume\""),
                ("value_template", JSONText.quote("{{ 'paused' if 'user' in value_json.paused else 'playing' }}")),
                ("state_on", "\"paused\""), ("state_off", "\"playing\""), ("icon", "\"mdi:pause\""),
            ])
        // The photo on screen as a favourite: a star from the dashboard, and why the slide was chosen.
        add(
            "switch", "favourite", "Favourite",
            [
                command, state, ("payload_on", "\"favourite on\""), ("payload_off", "\"favourite off\""),
                ("value_template", JSONText.quote("{{ 'on' if value_json.favourite else 'off' }}")),
                ("state_on", "\"on\""), ("state_off", "\"off\""), ("icon", "\"mdi:star\""),
            ])
        add(
            "sensor", "why", "Why this photo",
            [state, ("value_template", JSONText.quote("{{ value_json.why }}")), ("icon", "\"mdi:help-circle\"")])
        // Every category is an option, the library root's own photos as "/" (no folder can be called that); the
        // command quotes the name as JSON, so names with spaces at their ends, quotes or the words next and prev
        // are asked for as they are.
        if !categories.isEmpty {
            let options = categories.map { JSONText.quote($0.isEmpty ? "/" : $0) }.joined(separator: ",")
            add(
                "select", "category", "Category",
                [
                    command, state, ("options", "[\(options)]"),
                    (
                        "command_template",
                        JSONText.quote("category {{ '\"\"' if value == '/' else value | tojson }}")
                    ),
                    (
                        "value_template",
                        JSONText.quote("{{ '/' if value_json.category == '' else value_json.category }}")
                    ),
                    ("icon", "\"mdi:folder-image\""),
                ])
        } else {
            messages.append(Message(topic: topics.discoveryTopic(component: "select", object: "category"), payload: ""))
        }
        add(
            "number", "interval", "Interval",
            [
                command, state, ("command_template", JSONText.quote("interval {{ value }}")),
                ("value_template", JSONText.quote("{{ value_json.interval }}")),
                ("min", "\(intervalRange.minimum)"), ("max", "\(intervalRange.maximum)"), ("step", "1"),
                ("unit_of_measurement", "\"s\""), ("mode", "\"box\""), ("icon", "\"mdi:timer-outline\""),
            ])
        add(
            "sensor", "slide", "Slide",
            [state, ("value_template", JSONText.quote("{{ value_json.slide }}")), ("icon", "\"mdi:image\"")])
        add(
            "sensor", "category_shown", "Category shown",
            [state, ("value_template", JSONText.quote("{{ value_json.category }}")), ("icon", "\"mdi:folder\"")])
        if image {
            add(
                "image", "picture", "Picture",
                [("image_topic", JSONText.quote(topics.image)), ("content_type", "\"image/jpeg\"")])
        } else {
            messages.append(Message(topic: topics.discoveryTopic(component: "image", object: "picture"), payload: ""))
        }
        return messages
    }

    /// An output's device is connected through the player's own (Home Assistant's `via_device`).
    static func deviceJSON(topics: MQTTTopics, device: Device) -> String {
        let via = topics.output == nil ? "" : ",\"via_device\":\(JSONText.quote(MQTTTopics(player: topics).nodeID))"
        return "{\"identifiers\":[\(JSONText.quote(topics.nodeID))],\"name\":\(JSONText.quote(device.name)),"
            + "\"manufacturer\":\"Vitrine\",\"model\":\(JSONText.quote(device.model)),"
            + "\"sw_version\":\(JSONText.quote(device.version))\(via)}"
    }
}
