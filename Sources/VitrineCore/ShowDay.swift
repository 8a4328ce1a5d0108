/// The date and time the show is on, as the frame's wall shows it, in the reckoning of EXIF capture dates (the local
/// date and time counted as if they were UTC, `CaptureDate`), so the two compare without knowing any zone.
public struct ShowDay: Sendable, Equatable {
    public var year: Int
    public var month: Int
    public var day: Int
    /// Seconds since 1970 of the local date and time, counted as UTC.
    public var wallSeconds: Double

    public init(year: Int, month: Int, day: Int, secondsIntoDay: Double = 12 * 3600) {
        self.year = year
        self.month = month
        self.day = day
        wallSeconds = Double(CivilDate.daysSince1970(year: year, month: month, day: day)) * 86400 + secondsIntoDay
    }

    public init(_ time: LocalTime) {
        self.init(
            year: time.year, month: time.month, day: time.day,
            secondsIntoDay: Double(time.hour * 3600 + time.minute * 60 + time.second))
    }

    /// Days since 1970 of the local date.
    public var dayNumber: Int { CivilDate.daysSince1970(year: year, month: month, day: day) }

    static let daysBeforeMonth = [0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335]

    /// The day's place in a leap year's calendar (1 January is 0, 29 February 59, 31 December 365), so every year's
    /// dates line up and 29 February has a place of its own.
    static func leapOrdinal(month: Int, day: Int) -> Int { daysBeforeMonth[month - 1] + day - 1 }

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    /// Whether a photo taken at `captured` (seconds, EXIF reckoning) was taken on this calendar date, give or take
    /// `leeway` days, in an earlier year: across New Year by going round the calendar, and a 29 February photo on
    /// 28 February in other years even without leeway. "Earlier year" means at least 300 days ago, so a photo from
    /// last week is not "on this day" on 2 January.
    public func isAnniversary(of captured: Double, leeway: Int) -> Bool {
        guard wallSeconds - captured >= 300 * 86400 else { return false }
        let date = CivilDate.date(daysSince1970: Int((captured / 86400).rounded(.down)))
        let photo = Self.leapOrdinal(month: date.month, day: date.day)
        let today = Self.leapOrdinal(month: month, day: day)
        let apart = abs(photo - today)
        if min(apart, 366 - apart) <= leeway { return true }
        return photo == 59 && month == 2 && day == 28 && !Self.isLeap(year)
    }

    /// Years from a capture to today, to the nearest (an anniversary photo is within days of a whole number), for
    /// "3 years ago today".
    public func yearsSince(_ captured: Double) -> Int {
        Int(((wallSeconds - captured) / (365.2425 * 86400)).rounded())
    }
}
