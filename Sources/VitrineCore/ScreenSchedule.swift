/// When the screen sleeps each day (`screenSchedule` in `vitrine.json`), in local time.
public struct ScreenSchedule: Sendable, Equatable {
    public struct TimeOfDay: Sendable, Equatable, Comparable, CustomStringConvertible {
        public var minutes: Int

        public init(hour: Int, minute: Int) {
            minutes = hour * 60 + minute
        }

        public init?(parsing text: String) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy({ (1...2).contains($0.count) && $0.allSatisfy(\.isASCII) }),
                let hour = Int(parts[0]), let minute = Int(parts[1]), (0...23).contains(hour), (0...59).contains(minute)
            else { return nil }
            self.init(hour: hour, minute: minute)
        }

        public static func < (lhs: TimeOfDay, rhs: TimeOfDay) -> Bool { lhs.minutes < rhs.minutes }

        public var description: String {
            let hour = minutes / 60
            let minute = minutes % 60
            return "\(hour < 10 ? "0" : "")\(hour):\(minute < 10 ? "0" : "")\(minute)"
        }
    }

    public var off: TimeOfDay
    public var on: TimeOfDay

    public init(off: TimeOfDay, on: TimeOfDay) {
        self.off = off
        self.on = on
    }

    /// Whether the screen should be on at `minute` minutes after local midnight. The off span may cross midnight.
    public func isOn(atMinute minute: Int) -> Bool {
        if off < on { return !(off.minutes <= minute && minute < on.minutes) }
        return on.minutes <= minute && minute < off.minutes
    }

    /// Minutes from `minute` until the next change, 1...1440.
    public func minutesUntilChange(fromMinute minute: Int) -> Int {
        let target = isOn(atMinute: minute) ? off.minutes : on.minutes
        let difference = (target - minute + 1440) % 1440
        return difference == 0 ? 1440 : difference
    }
}

extension ScreenSchedule {
    public static let keyNames = ["off", "on"]

    /// `{"off": "22:30", "on": "07:00"}`.
    static func parse(_ schedule: ConfigObject) throws(ConfigError) -> ScreenSchedule {
        try schedule.rejectUnknownKeys(allowed: keyNames)
        func time(_ key: String) throws(ConfigError) -> ScreenSchedule.TimeOfDay {
            let text = try schedule.requiredString(key)
            guard let time = ScreenSchedule.TimeOfDay(parsing: text) else {
                throw schedule.failure(key, "\"\(text)\" is not a time of day (expected HH:MM, e.g. 22:30)")
            }
            return time
        }
        let off = try time("off")
        let on = try time("on")
        guard off != on else { throw schedule.failure("on", "the screen would go off and on at the same time") }
        return ScreenSchedule(off: off, on: on)
    }
}
