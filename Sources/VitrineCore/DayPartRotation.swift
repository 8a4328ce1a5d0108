/// The player's side of `playlists`: the day-part in force, which of its categories plays next (weights dealt by
/// smooth weighted round robin, a slide at a time), where each category was left (so a rotation comes back to the
/// slide after, and a `shuffle` round goes on), and a category chosen by hand that holds the day-part off.
public struct DayPartRotation: Sendable {
    /// Where a category was left.
    public struct Left: Sendable {
        public var slide: SlideID
        public var selection: SelectionState?
    }

    public private(set) var part: DayParts.Part?
    /// Until when (monotonic seconds) a category chosen by hand holds; infinity: until the next boundary.
    public private(set) var heldUntil: Double?
    private var credits: [String: Double] = [:]
    private var left: [String: Left] = [:]

    public init() {}

    /// A new day-part (or none) is in force: the hand's choice ends, the rotation starts afresh.
    mutating func set(_ newPart: DayParts.Part?) {
        part = newPart
        heldUntil = nil
        credits = [:]
    }

    /// A category was chosen by hand while a day-part is in force: it holds for `hold` seconds, else until the next
    /// boundary.
    mutating func chosenByHand(now: Double, hold: Double?) {
        guard part != nil else { return }
        heldUntil = hold.map { now + $0 } ?? .infinity
    }

    /// Whether a hand's choice still holds at `now`; one that ran out is forgotten.
    mutating func isHeld(now: Double) -> Bool {
        guard let until = heldUntil else { return false }
        if now < until { return true }
        heldUntil = nil
        return false
    }

    /// The category the next slide comes from: the day-part's category whose credit is highest after each earned
    /// its weight (those not in the library earn nothing). Nil when no day-part is in force or none of its
    /// categories is there.
    mutating func nextCategory(in library: [String]) -> String? {
        guard let part else { return nil }
        let present = part.categories.filter { library.contains($0.name) }
        guard !present.isEmpty else { return nil }
        let total = Double(present.reduce(0) { $0 + $1.weight })
        for category in present { credits[category.name, default: 0] += Double(category.weight) / total }
        // The first listed wins a tie: the day-part opens with the category it names first.
        var chosen = present[0].name
        for category in present where credits[category.name, default: 0] > credits[chosen, default: 0] {
            chosen = category.name
        }
        credits[chosen, default: 0] -= 1
        return chosen
    }

    /// Whether the day-part rotates between several categories of the library.
    func rotates(in library: [String]) -> Bool {
        (part?.categories.count { library.contains($0.name) } ?? 0) > 1
    }

    mutating func leave(_ category: String, at slide: SlideID, selection: SelectionState?) {
        left[category] = Left(slide: slide, selection: selection)
    }

    /// Where `category` was left, forgotten once taken.
    mutating func takeLeft(_ category: String) -> Left? {
        left.removeValue(forKey: category)
    }
}
