/// `presence` in `vitrine.json`: a motion sensor's line (optional: input alone also counts), how long an empty
/// room waits before the screen goes off, and whether someone at night wakes it.
public struct PresenceSettings: Sendable, Equatable {
    public var sensor: GPIOLine?
    public var offAfterMinutes: Double
    public var wakeOutsideSchedule: Bool

    public init(sensor: GPIOLine? = nil, offAfterMinutes: Double = 10, wakeOutsideSchedule: Bool = false) {
        self.sensor = sensor
        self.offAfterMinutes = offAfterMinutes
        self.wakeOutsideSchedule = wakeOutsideSchedule
    }

    public static let keyNames = ["sensor", "offAfter", "wakeOutsideSchedule"]
    /// HC-SR501 and AM312 modules drive their output high on motion: no bias, active high.
    public static let defaultSensorLine = GPIOLine(bias: .disabled, activeLow: false)

    static func parse(_ object: ConfigObject) throws(ConfigError) -> PresenceSettings {
        try object.rejectUnknownKeys(allowed: keyNames)
        var settings = PresenceSettings()
        if let sensor = try object.object("sensor") {
            settings.sensor = try GPIOLine.parse(sensor, defaults: defaultSensorLine)
        }
        settings.offAfterMinutes = try object.number("offAfter", in: 0.1...1440, required: true) ?? 10
        settings.wakeOutsideSchedule = try object.bool("wakeOutsideSchedule") ?? false
        return settings
    }
}
