/// A `shuffle` round as it is saved with the position: the round's seed, each stream's threshold, and the photos
/// not yet shown behind a threshold (by name). A few hundred bytes whatever the library's size; the photos shown are
/// found again from the names' hashes.
public struct SelectionState: Sendable, Equatable {
    public struct PastDay: Sendable, Equatable {
        public var day: Int
        public var threshold: Double
    }

    public var category: String
    public var round: Int
    public var seed: UInt64
    public var reference: Double
    public var drawn: Int
    public var generator: UInt64
    /// By stream: on this day, favourites, recent, rest.
    public var thresholds: [Double]
    /// The day the on-this-day stream was made for, and earlier days of the round with their thresholds.
    public var onThisDayFor: Int?
    public var pastDays: [PastDay]
    /// What the on-this-day and recent keys depended on; a change makes their thresholds meaningless.
    public var leeway: Int
    public var halfLife: Double
    public var exceptions: [String]
    /// The streams' credits in the round robin of shares.
    public var credits: [Double] = [0, 0, 0, 0]

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    static func bits(_ value: Double) -> String { hex(value.bitPattern) }

    /// The state as a JSON object (numbers that must come back exactly are written as their bits in hex).
    public var json: String {
        let thresholds = self.thresholds.map { JSONText.quote(Self.bits($0)) }.joined(separator: ",")
        let past = pastDays.map { "[\($0.day),\(JSONText.quote(Self.bits($0.threshold)))]" }.joined(separator: ",")
        let exceptions = self.exceptions.map(JSONText.quote).joined(separator: ",")
        return "{\"category\":\(JSONText.quote(category)),\"round\":\(round),\"seed\":\"\(Self.hex(seed))\","
            + "\"reference\":\"\(Self.bits(reference))\",\"drawn\":\(drawn),\"generator\":\"\(Self.hex(generator))\","
            + "\"thresholds\":[\(thresholds)],\"day\":\(onThisDayFor.map(String.init) ?? "null"),"
            + "\"pastDays\":[\(past)],\"leeway\":\(leeway),\"halfLife\":\(JSONText.number(halfLife)),"
            + "\"exceptions\":[\(exceptions)],"
            + "\"credits\":[\(credits.map { JSONText.quote(Self.bits($0)) }.joined(separator: ","))]}"
    }

    /// The state from its JSON object; nil when anything is missing or malformed (the round then starts afresh).
    public static func parse(_ value: JSONValue) -> SelectionState? {
        guard let object = try? ConfigObject(value, file: "", path: "") else { return nil }
        func hexNumber(_ text: String?) -> UInt64? {
            guard let text, text.utf8.count == 16 else { return nil }
            return UInt64(text, radix: 16)
        }
        func strings(_ key: String) -> [JSONValue]? { try? object.array(key) }
        func text(_ value: JSONValue) -> String? {
            if case .string(let text) = value.kind { return text }
            return nil
        }
        func integer(_ value: JSONValue) -> Int? {
            if case .number(let number) = value.kind, number.rounded() == number, abs(number) < 1e12 {
                return Int(number)
            }
            return nil
        }
        guard let category = try? object.string("category"), let round = try? object.integer("round", in: 1...Int.max),
            let seed = hexNumber(try? object.string("seed")),
            let reference = hexNumber(try? object.string("reference")).map(Double.init(bitPattern:)),
            let drawn = try? object.integer("drawn", in: 0...Int.max),
            let generator = hexNumber(try? object.string("generator")),
            let thresholdValues = strings("thresholds"), thresholdValues.count == 4,
            let leeway = try? object.integer("leeway", in: 0...30),
            let halfLife = try? object.number("halfLife", in: 1...36500),
            let pastValues = strings("pastDays"), let exceptionValues = strings("exceptions")
        else { return nil }
        let thresholds = thresholdValues.compactMap { hexNumber(text($0)).map(Double.init(bitPattern:)) }
        var pastDays: [PastDay] = []
        for past in pastValues {
            guard case .array(let pair) = past.kind, pair.count == 2, let day = integer(pair[0]),
                let threshold = hexNumber(text(pair[1])).map(Double.init(bitPattern:))
            else { return nil }
            pastDays.append(PastDay(day: day, threshold: threshold))
        }
        let exceptions = exceptionValues.compactMap(text)
        guard thresholds.count == 4, exceptions.count == exceptionValues.count else { return nil }
        let day = object["day"].flatMap(integer)
        let credits = (strings("credits") ?? []).compactMap { hexNumber(text($0)).map(Double.init(bitPattern:)) }
        return SelectionState(
            category: category, round: round, seed: seed, reference: reference, drawn: drawn, generator: generator,
            thresholds: thresholds, onThisDayFor: day, pastDays: pastDays, leeway: leeway, halfLife: halfLife,
            exceptions: exceptions,
            credits: credits.count == 4 && credits.allSatisfy(\.isFinite) ? credits : [0, 0, 0, 0])
    }
}

extension SelectionEngine {
    /// The round as it stands, for saving. `waiting` are photos drawn but not yet shown (the slide being made ready):
    /// saved as not shown.
    public func snapshot(category: String, waiting: [Int32], _ catalog: SlideCatalog) -> SelectionState? {
        guard roundNumber > 0 else { return nil }
        var exceptions: [String] = []
        var seen = Set<Int32>()
        let behind = streams.flatMap(\.joiners).filter { isCandidate($0, in: catalog) }
        for index in waiting + behind where seen.insert(index).inserted && catalog.isLive(index) {
            guard exceptions.count < Self.savedExceptionLimit else { break }
            exceptions.append(catalog.id(at: index).name)
        }
        return SelectionState(
            category: catalog.category, round: roundNumber, seed: seed, reference: reference,
            drawn: max(0, drawn - waiting.count), generator: generator.position, thresholds: streams.map(\.threshold),
            onThisDayFor: onThisDayFor,
            pastDays: pastDays.map { SelectionState.PastDay(day: $0.day, threshold: $0.threshold) },
            leeway: mix.onThisDayDays, halfLife: mix.recentDays, exceptions: exceptions, credits: credits)
    }

    /// Takes up a saved round over the catalog as it is now: the photos at or below each threshold are shown, but
    /// the exceptions and the photos new since the last index (`SlideTraits.fresh`) are not. False (and nothing
    /// changed) when the state is of another category.
    public mutating func restore(_ state: SelectionState, _ catalog: SlideCatalog) -> Bool {
        guard state.category == catalog.category else { return false }
        roundNumber = state.round
        seed = state.seed
        reference = state.reference
        drawn = state.drawn
        generator = SeededGenerator(seed: state.generator)
        credits = state.credits
        growTables(to: catalog.capacity)
        for index in shown.indices { shown[index] = false }
        pastDays = []
        let now = today
        // The streams of the saved day; today's is made afresh below if the day has changed since.
        if let day = state.onThisDayFor {
            let date = CivilDate.date(daysSince1970: day)
            today = ShowDay(year: date.year, month: date.month, day: date.day)
        }
        var thresholds = state.thresholds
        if state.leeway != mix.onThisDayDays { thresholds[Kind.onThisDay.rawValue] = -Double.infinity }
        if state.halfLife != mix.recentDays { thresholds[Kind.recent.rawValue] = -Double.infinity }
        for kind in Kind.allCases {
            var stream = makeStream(kind, catalog)
            let threshold = thresholds[kind.rawValue]
            while stream.next < stream.order.count,
                let key = key(kind, stream.order[stream.next], in: catalog), key <= threshold
            {
                shown[Int(stream.order[stream.next])] = true
                stream.next += 1
            }
            stream.threshold = threshold
            streams[kind.rawValue] = stream
        }
        if state.leeway == mix.onThisDayDays {
            for past in state.pastDays {
                let date = CivilDate.date(daysSince1970: past.day)
                today = ShowDay(year: date.year, month: date.month, day: date.day)
                for index in catalog.byName {
                    if let key = key(.onThisDay, index, in: catalog), key <= past.threshold { shown[Int(index)] = true }
                }
                pastDays.append((past.day, past.threshold))
            }
        }
        onThisDayFor = state.onThisDayFor
        today = now
        for index in blocked { shown[Int(index)] = true }
        remaining = catalog.byName.count { !shown[Int($0)] }
        var waiting = state.exceptions.compactMap { catalog.index(of: SlideID(category: catalog.category, name: $0)) }
        waiting += catalog.byName.filter { catalog.traits(at: $0).fresh }
        for index in waiting where shown[Int(index)] && !blocked.contains(index) {
            shown[Int(index)] = false
            remaining += 1
            rejoin(index, catalog)
        }
        if let now, onThisDayFor != now.dayNumber { setToday(now, catalog: catalog) }
        return true
    }
}
