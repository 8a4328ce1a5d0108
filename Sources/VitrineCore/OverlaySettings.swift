/// `overlay` in `vitrine.json`: a clock, the date and texts from MQTT topics over the picture, in one corner.
public struct OverlaySettings: Sendable, Equatable {
    /// A line whose content comes from an MQTT topic (a Home Assistant sensor, a doorbell message).
    public struct Text: Sendable, Equatable {
        public var topic: String
        /// A field of a JSON payload (`temperature`, or `attributes.humidity`); nil: the payload is the value.
        public var field: String?
        /// `{value}` is replaced by the value, e.g. `"{value} °C"`.
        public var format = "{value}"
        /// Seconds after the last message before the line hides (a sensor gone quiet shows nothing rather than an
        /// old value); nil: never.
        public var staleSeconds: Double?

        public init(topic: String) {
            self.topic = topic
        }

        public func line(value: String) -> String {
            format.replacing("{value}", with: value)
        }
    }

    public enum Look: String, Sendable, CaseIterable {
        /// Light text with a soft dark shadow.
        case shadow
        /// Light text on a translucent dark plate.
        case plate
    }

    public enum Clock: Sendable, Equatable {
        case off
        /// The locale's form: 12-hour with AM/PM for American English, 24-hour elsewhere.
        case locale
        case pattern(ClockFormat)

        public func format(locale: DateStyle) -> ClockFormat? {
            switch self {
            case .off: return nil
            case .locale: return ClockFormat.default(for: locale)
            case .pattern(let format): return format
            }
        }
    }

    public var clock: Clock = .off
    public var date = false
    public var texts: [Text] = []
    public var corner: CaptionStyle.Position = .topRight
    /// Text height as a fraction of the picture's height.
    public var size = 0.06
    public var look: Look = .shadow

    public init() {}

    public static let keyNames = ["clock", "date", "texts", "corner", "size", "look"]
    public static let textKeyNames = ["topic", "field", "format", "staleSeconds"]

    /// `clock`: true (the locale's form), false, or a pattern such as `"HH:mm"` or `"h:mm a"`.
    static func parse(_ object: ConfigObject) throws(ConfigError) -> OverlaySettings {
        try object.rejectUnknownKeys(allowed: keyNames)
        var settings = OverlaySettings()
        if let clock = object["clock"] {
            switch clock.kind {
            case .bool(let on): settings.clock = on ? .locale : .off
            case .string(let pattern):
                guard let format = ClockFormat(pattern) else {
                    throw object.failure(
                        "clock",
                        "\"\(pattern)\" is not a clock pattern (HH or H for 24 hours, hh or h for 12, mm, a for "
                            + "AM/PM, text in single quotes; e.g. \"HH:mm\" or \"h:mm a\")")
                }
                settings.clock = .pattern(format)
            case .null: break
            default: throw object.failure("clock", "expected true, false or a pattern such as \"HH:mm\"")
            }
        }
        settings.date = try object.bool("date") ?? false
        settings.corner = try object.choice("corner", as: CaptionStyle.Position.self) ?? settings.corner
        settings.size = try object.number("size", in: 0.02...0.25) ?? settings.size
        settings.look = try object.choice("look", as: Look.self) ?? settings.look
        for (index, element) in (try object.array("texts") ?? []).enumerated() {
            let entry = try ConfigObject(element, file: object.file, path: "\(object.childPath("texts"))[\(index)]")
            try entry.rejectUnknownKeys(allowed: textKeyNames)
            let topic = try entry.requiredString("topic")
            if topic.isEmpty || topic.contains("+") || topic.contains("#") {
                throw entry.failure("topic", "\"\(topic)\" must be one topic, without wildcards (+, #)")
            }
            var text = Text(topic: topic)
            if let field = try entry.string("field") {
                guard !field.isEmpty, !field.split(separator: ".", omittingEmptySubsequences: false).contains("")
                else {
                    throw entry.failure("field", "\"\(field)\" is not a field path (e.g. temperature or a.b)")
                }
                text.field = field
            }
            if let format = try entry.string("format") {
                guard format.contains("{value}") else {
                    throw entry.failure("format", "\"\(format)\" has no {value} (e.g. \"{value} °C\")")
                }
                text.format = format
            }
            text.staleSeconds = try entry.number("staleSeconds", in: 1...604_800)
            settings.texts.append(text)
        }
        return settings
    }
}
