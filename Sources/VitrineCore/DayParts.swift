/// A minute of local wall-clock time: the day (days since 1970 of the local date) and the minute of that day. The
/// runtime turns one into an epoch second with the zone's rules (`mktime`), so a boundary falls at its wall-clock
/// time on the days daylight saving starts and ends too.
public struct LocalMinute: Sendable, Equatable, Comparable, Hashable, CustomStringConvertible {
    public var day: Int
    public var minute: Int

    public init(day: Int, minute: Int) {
        self.day = day + minute.floorDivided(by: 1440)
        self.minute = minute.floorModulo(1440)
    }

    public init(_ time: LocalTime) {
        self.init(
            day: CivilDate.daysSince1970(year: time.year, month: time.month, day: time.day),
            minute: time.hour * 60 + time.minute)
    }

    public static func < (a: LocalMinute, b: LocalMinute) -> Bool { (a.day, a.minute) < (b.day, b.minute) }

    public var date: (year: Int, month: Int, day: Int) { CivilDate.date(daysSince1970: day) }
    /// 1 for Monday to 7 for Sunday (1 January 1970 was a Thursday).
    public var weekday: Int { (day + 3).floorModulo(7) + 1 }

    /// The epoch second this local minute begins, given the zone's offset from UTC at any moment (seconds east):
    /// 07:00 on the day summer time starts is 05:00 UTC in Berlin, not 06:00. The earliest moment whose local time
    /// is this minute or later, among those the offsets in force a day either side give: a minute that happens
    /// twice (the clocks go back) is its first time, one that does not happen (they jump forward) is as late as
    /// the jump.
    public func epoch(offsetAt offset: (Int) -> Int) -> Int {
        let wall = day * 86400 + minute * 60
        func local(_ moment: Int) -> LocalMinute {
            let seconds = moment + offset(moment)
            return LocalMinute(day: seconds.floorDivided(by: 86400), minute: seconds.floorModulo(86400) / 60)
        }
        var best: Int?
        for probe in [wall - 86400, wall, wall + 86400] {
            let candidate = wall - offset(probe)
            if local(candidate) >= self, candidate < best ?? Int.max { best = candidate }
        }
        return best ?? wall - offset(wall)
    }

    public var description: String {
        let (year, month, day) = date
        func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(pad(month))-\(pad(day)) \(pad(minute / 60)):\(pad(minute % 60))"
    }
}

extension Int {
    func floorDivided(by divisor: Int) -> Int { self >= 0 ? self / divisor : -((-self + divisor - 1) / divisor) }
    func floorModulo(_ divisor: Int) -> Int { self - floorDivided(by: divisor) * divisor }
}

/// `playlists`: what plays when, for signage. Each day-part names a category (or several, with weights) and when it
/// is in force: weekdays, a span of the day (which may cross midnight; it then belongs to the day it starts on), a
/// span of dates (which may cross New Year), and optionally an interval of its own. The first day-part in the list
/// that is in force wins, so a Christmas set listed first takes December over from the everyday ones; when none is,
/// the show plays as the rest of the config says.
public struct DayParts: Sendable, Equatable {
    public struct Category: Sendable, Equatable {
        public var name: String
        public var weight: Int

        public init(name: String, weight: Int = 1) {
            self.name = name
            self.weight = weight
        }
    }

    public struct MonthDay: Sendable, Equatable, Comparable, CustomStringConvertible {
        public var month: Int
        public var day: Int

        public static func < (a: MonthDay, b: MonthDay) -> Bool { (a.month, a.day) < (b.month, b.day) }

        public var description: String { "\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)" }

        /// `MM-DD`.
        init?(parsing text: String) {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) }),
                let month = Int(parts[0]), let day = Int(parts[1]), (1...12).contains(month),
                (1...[31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]).contains(day)
            else { return nil }
            self.month = month
            self.day = day
        }

        public init(month: Int, day: Int) {
            self.month = month
            self.day = day
        }
    }

    public struct Part: Sendable, Equatable {
        public var name: String
        public var categories: [Category]
        /// 1 (Monday) to 7 (Sunday); every day when empty.
        public var weekdays: Set<Int>
        /// Minutes after midnight; nil for the whole day. `to` may be 1440 (24:00), or before `from` (past midnight).
        public var from: Int?
        public var to: Int?
        /// Inclusive, and may wrap the year's end (12-20 to 01-06).
        public var dates: (from: MonthDay, to: MonthDay)?
        /// Seconds per slide while it is in force; nil keeps the config's.
        public var interval: Double?

        public init(
            name: String, categories: [Category], weekdays: Set<Int> = [], from: Int? = nil, to: Int? = nil,
            dates: (from: MonthDay, to: MonthDay)? = nil, interval: Double? = nil
        ) {
            self.name = name
            self.categories = categories
            self.weekdays = weekdays
            self.from = from
            self.to = to
            self.dates = dates
            self.interval = interval
        }

        public static func == (a: Part, b: Part) -> Bool {
            a.name == b.name && a.categories == b.categories && a.weekdays == b.weekdays && a.from == b.from
                && a.to == b.to && a.dates?.from == b.dates?.from && a.dates?.to == b.dates?.to
                && a.interval == b.interval
        }

        /// Whether the part is in force at `time`.
        public func isInForce(at time: LocalMinute) -> Bool {
            var day = time.day
            if let from, let to {
                if from < to {
                    guard (from..<to).contains(time.minute) else { return false }
                } else if time.minute >= from {
                    // Tonight's part of a span that crosses midnight.
                } else if time.minute < to {
                    day -= 1
                } else {
                    return false
                }
            }
            let start = LocalMinute(day: day, minute: 0)
            if !weekdays.isEmpty, !weekdays.contains(start.weekday) { return false }
            if let dates {
                let date = start.date
                let today = MonthDay(month: date.month, day: date.day)
                if dates.from <= dates.to {
                    guard dates.from <= today, today <= dates.to else { return false }
                } else {
                    guard today >= dates.from || today <= dates.to else { return false }
                }
            }
            return true
        }
    }

    public var parts: [Part]
    /// Seconds a category chosen by hand holds before the day-part in force takes over again; nil: until the next
    /// boundary.
    public var hold: Double?

    public init(parts: [Part], hold: Double? = nil) {
        self.parts = parts
        self.hold = hold
    }

    /// The index of the day-part in force at `time`; nil when none is.
    public func inForce(at time: LocalMinute) -> Int? {
        parts.firstIndex { $0.isInForce(at: time) }
    }

    /// The next minute after `time` at which another day-part (or none) comes into force: the boundaries are the
    /// parts' start and end times and midnights, looked for over the next eight days (a week and the day a span
    /// crossing midnight ends on). Nil when nothing changes in that time (a date span further off is found at one
    /// of the next days' midnights, when the runtime asks again).
    public func nextChange(after time: LocalMinute) -> LocalMinute? {
        let current = inForce(at: time)
        var candidates: Set<LocalMinute> = []
        for offset in 0...8 {
            let day = time.day + offset
            candidates.insert(LocalMinute(day: day, minute: 0))
            for part in parts {
                if let from = part.from { candidates.insert(LocalMinute(day: day, minute: from)) }
                if let to = part.to { candidates.insert(LocalMinute(day: day, minute: to)) }
            }
        }
        return candidates.filter { $0 > time }.sorted().first { inForce(at: $0) != current }
    }

    /// The week from `monday` (the day of a Monday) as a table: for each day, the spans and what is in force.
    public func week(from monday: Int) -> [String] {
        let names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
        return (0..<7).map { offset in
            let day = monday + offset
            var spans: [String] = []
            var start = LocalMinute(day: day, minute: 0)
            let end = LocalMinute(day: day + 1, minute: 0)
            while start < end {
                let next = min(nextChange(after: start) ?? end, end)
                let label = inForce(at: start).map { parts[$0].name } ?? "-"
                spans.append("\(Self.clock(start.minute))-\(next == end ? "24:00" : Self.clock(next.minute)) \(label)")
                start = next
            }
            return "\(names[offset])  " + spans.joined(separator: ", ")
        }
    }

    static func clock(_ minute: Int) -> String {
        ScreenSchedule.TimeOfDay(hour: minute / 60, minute: minute % 60).description
    }

    // MARK: - Config

    public static let keyNames = ["name", "categories", "days", "from", "to", "dates", "interval"]
    static let dayNames = ["mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6, "sun": 7]

    /// `playlists` and `playlistHold` (minutes).
    public static func parse(_ list: [JSONValue], hold: Double?, file: String) throws(ConfigError) -> DayParts {
        var parts: [Part] = []
        for (index, element) in list.enumerated() {
            let object = try ConfigObject(element, file: file, path: "playlists[\(index)]")
            try object.rejectUnknownKeys(allowed: keyNames)
            let name = try object.requiredString("name")
            guard !name.isEmpty else { throw object.failure("name", "must not be empty") }
            guard !parts.contains(where: { $0.name == name }) else {
                throw object.failure("name", "\"\(name)\" names another playlist too")
            }
            var part = Part(name: name, categories: try categories(object))
            if let days = try object.stringList("days") {
                for day in days {
                    guard let number = dayNames[day.lowercased()] else {
                        throw object.failure(
                            "days", "\"\(day)\" is not a day (expected mon, tue, wed, thu, fri, sat, sun)")
                    }
                    part.weekdays.insert(number)
                }
            }
            func time(_ key: String, allowing24 allowed: Bool) throws(ConfigError) -> Int? {
                guard let text = try object.string(key) else { return nil }
                if allowed, text == "24:00" { return 1440 }
                guard let time = ScreenSchedule.TimeOfDay(parsing: text) else {
                    throw object.failure(key, "\"\(text)\" is not a time of day (expected HH:MM, e.g. 06:30)")
                }
                return time.minutes
            }
            part.from = try time("from", allowing24: false)
            part.to = try time("to", allowing24: true)
            switch (part.from, part.to) {
            case (nil, nil): break
            case (nil, _): throw object.failure("from", "missing (a playlist with \"to\" needs \"from\")")
            case (_, nil): throw object.failure("to", "missing (a playlist with \"from\" needs \"to\")")
            case (let from?, let to?):
                guard from != to % 1440 else { throw object.failure("to", "the span would be empty (from = to)") }
            }
            if let dates = try object.object("dates") {
                try dates.rejectUnknownKeys(allowed: ["from", "to"])
                func monthDay(_ key: String) throws(ConfigError) -> MonthDay {
                    let text = try dates.requiredString(key)
                    guard let value = MonthDay(parsing: text) else {
                        throw dates.failure(key, "\"\(text)\" is not a date (expected MM-DD, e.g. 12-24)")
                    }
                    return value
                }
                part.dates = (try monthDay("from"), try monthDay("to"))
            }
            part.interval = try object.number("interval", in: 0.05...86400)
            parts.append(part)
        }
        return DayParts(parts: parts, hold: hold.map { $0 * 60 })
    }

    /// `"categories"`: a name, a list of names, or names with weights (`{"Lunch": 2, "Specials": 1}`).
    private static func categories(_ object: ConfigObject) throws(ConfigError) -> [Category] {
        guard let found = object["categories"] else { throw object.failure("categories", "missing") }
        var categories: [Category] = []
        if case .object = found.kind, let weights = try object.object("categories") {
            for key in weights.keys {
                guard let weight = try weights.integer(key, in: 1...100) else { continue }
                categories.append(Category(name: key, weight: weight))
            }
        } else if let names = try object.stringList("categories") {
            categories = names.map { Category(name: $0) }
        }
        guard !categories.isEmpty else { throw object.failure("categories", "names no category") }
        return categories
    }
}
