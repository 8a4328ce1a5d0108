/// What `shuffle` draws each slide from (`mix` in the config): shares of the slides for photos taken on today's date
/// in earlier years, for favourites, for recent photos, and for the rest of the round. A share whose photos have all
/// been shown this round (or that has none) gives its slides to the rest.
public struct SelectionMix: Sendable, Equatable {
    public var onThisDay: Double
    /// Days either side of today's date that still count as "on this day".
    public var onThisDayDays: Int
    public var favourites: Double
    public var recent: Double
    /// The half-life of the recent share, in days since capture: a photo this many days older is drawn half as often.
    public var recentDays: Double
    public var rest: Double

    public init(
        onThisDay: Double = 0, onThisDayDays: Int = 3, favourites: Double = 0, recent: Double = 0,
        recentDays: Double = 30, rest: Double? = nil
    ) {
        self.onThisDay = onThisDay
        self.onThisDayDays = onThisDayDays
        self.favourites = favourites
        self.recent = recent
        self.recentDays = recentDays
        self.rest = rest ?? max(0, 1 - onThisDay - favourites - recent)
    }

    /// Every slide from the round, in a fresh random order each round: plain `shuffle`.
    public static let plain = SelectionMix()

    public static let keyNames = ["onThisDay", "favourites", "recent", "rest"]

    /// `mix`: each share a number from 0 to 1 (`onThisDay` and `recent` may be `{"share": S, "days": D}`); `rest`
    /// defaults to what the others leave, and the shares must add up to 1.
    public static func parse(_ object: ConfigObject) throws(ConfigError) -> SelectionMix {
        try object.rejectUnknownKeys(allowed: keyNames)
        func share(_ key: String, daysIn range: ClosedRange<Double>) throws(ConfigError) -> (Double, Double?) {
            if let found = object[key], case .object = found.kind, let nested = try object.object(key) {
                try nested.rejectUnknownKeys(allowed: ["share", "days"])
                let share = try nested.number("share", in: 0...1, required: true) ?? 0
                return (share, try nested.number("days", in: range))
            }
            return (try object.number(key, in: 0...1) ?? 0, nil)
        }
        let (onThisDay, leeway) = try share("onThisDay", daysIn: 0...30)
        if let leeway, leeway != leeway.rounded() {
            throw object.failure("onThisDay.days", "must be a whole number of days (0 to 30)")
        }
        let (recent, halfLife) = try share("recent", daysIn: 1...36500)
        let favourites = try object.number("favourites", in: 0...1) ?? 0
        let rest = try object.number("rest", in: 0...1)
        let mix = SelectionMix(
            onThisDay: onThisDay, onThisDayDays: leeway.map { Int($0) } ?? 3, favourites: favourites, recent: recent,
            recentDays: halfLife ?? 30, rest: rest)
        guard abs(mix.onThisDay + mix.favourites + mix.recent + mix.rest - 1) <= 0.001 else {
            let sum = ConfigObject.format(mix.onThisDay + mix.favourites + mix.recent + mix.rest)
            throw object.failure(
                rest == nil ? "favourites" : "rest", "the shares add up to \(sum); they must add up to 1")
        }
        return mix
    }

    /// The shares as the config writes them, for `check-config` and status.
    public var summary: String {
        var parts: [String] = []
        if onThisDay > 0 { parts.append("on this day \(Self.percent(onThisDay)) (±\(onThisDayDays) days)") }
        if favourites > 0 { parts.append("favourites \(Self.percent(favourites))") }
        if recent > 0 {
            parts.append("recent \(Self.percent(recent)) (half-life \(ConfigObject.format(recentDays)) days)")
        }
        parts.append("rest \(Self.percent(rest))")
        return parts.joined(separator: ", ")
    }

    static func percent(_ share: Double) -> String { "\(ConfigObject.format((share * 1000).rounded() / 10)) %" }
}
