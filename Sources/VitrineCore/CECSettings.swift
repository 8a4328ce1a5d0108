/// `cec` in `vitrine.json`: HDMI-CEC to the TV. Off without the section.
public struct CECSettings: Sendable, Equatable {
    /// `/dev/cecN`; nil: the adapter on the screen's HDMI connector when the kernel tells, else the only one.
    public var adapter: String?
    /// The name the TV lists for the player (at most 14 ASCII characters, CEC's limit).
    public var osdName = "Vitrine"
    /// Turn the TV on (Image View On, Active Source) when the screen goes on.
    public var powerOnTV = true
    /// Put the TV in standby when the screen goes off, if the player is what it shows.
    public var standbyTV = true

    public init() {}

    public static let keyNames = ["adapter", "osdName", "powerOnTV", "standbyTV"]

    static func parse(_ object: ConfigObject) throws(ConfigError) -> CECSettings {
        try object.rejectUnknownKeys(allowed: keyNames)
        var settings = CECSettings()
        if let adapter = try object.string("adapter") {
            guard adapter.hasPrefix("/dev/") else {
                throw object.failure("adapter", "\"\(adapter)\" is not a device path (expected e.g. /dev/cec0)")
            }
            settings.adapter = adapter
        }
        if let name = try object.string("osdName") {
            guard !name.isEmpty, name.utf8.count <= 14,
                name.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) })
            else {
                throw object.failure("osdName", "\"\(name)\" must be 1 to 14 printable ASCII characters (CEC's limit)")
            }
            settings.osdName = name
        }
        settings.powerOnTV = try object.bool("powerOnTV") ?? true
        settings.standbyTV = try object.bool("standbyTV") ?? true
        return settings
    }
}
