/// Why a slide is on screen.
public enum SelectionReason: String, Sendable, CaseIterable {
    /// The next of the round (the rest share of `shuffle`).
    case round
    case onThisDay = "on this day"
    case favourite
    case recent
    /// The next in `name` or `newest` order.
    case order
    /// Asked for: a resumed position, or a slide chosen by hand.
    case chosen
}

/// `shuffle`'s draw: every photo of the category once per round, in an order that weighs the mix's shares, and a
/// round that survives restarts in a few hundred bytes.
///
/// Each share is a stream with its own draw order over its photos (all for the rest, the favourites, the dated
/// photos for recent, today's anniversaries for on this day); every slide first picks a stream by its share, then
/// takes that stream's first photo not yet shown this round. The orders come from a hash of the round's seed and each
/// photo's name, so they need not be stored: a photo's place is the same after a restart. Since every stream takes
/// its photos in its own order, the photos shown so far are exactly those at or below each stream's last taken key
/// (its threshold), less a short list of exceptions (photos that joined behind a threshold, and those skipped to make
/// a portrait pair). That is what is saved: the seed, four numbers and the exceptions.
///
/// Recent photos are drawn by weighted sampling without replacement (Efraimidis–Spirakis, as exponential races):
/// a photo's key is `ln(−ln u) + age/halfLife·ln 2`, so a photo one half-life older comes first half as often.
public struct SelectionEngine: Sendable {
    public struct Pick: Sendable, Equatable {
        /// One photo, or a portrait pair (left, right).
        public var photos: [Int32]
        public var reason: SelectionReason
        /// 1-based place in the round.
        public var number: Int

        public init(photos: [Int32], reason: SelectionReason, number: Int) {
            self.photos = photos
            self.reason = reason
            self.number = number
        }
    }

    /// The streams, in the order the shares are laid on [0, 1).
    enum Kind: Int, CaseIterable {
        case onThisDay, favourites, recent, rest

        var reason: SelectionReason {
            switch self {
            case .onThisDay: return .onThisDay
            case .favourites: return .favourite
            case .recent: return .recent
            case .rest: return .round
            }
        }

        /// Mixed into the seed so that each stream's order is independent of the others'.
        var salt: UInt64 {
            switch self {
            case .onThisDay: return 0x6F6E_7468_6973_6461
            case .favourites: return 0x6661_766F_7572_6974
            case .recent: return 0x7265_6365_6E74_2121
            case .rest: return 0x7265_7374_2D72_6F75
            }
        }
    }

    struct Stream: Sendable {
        /// The stream's photos in draw order (made at the round's start, or the day's for on this day).
        var order: [Int32] = []
        /// Every photo before it in `order` has been shown.
        var next = 0
        /// The key of the last photo taken from `order`.
        var threshold = -Double.infinity
        /// Photos of the stream that came after it had passed their place (arrivals, exceptions), taken first.
        var joiners: [Int32] = []
    }

    /// How far a portrait photo's stream is searched for a portrait partner.
    static let partnerLookahead = 24
    /// Exceptions beyond this many are not saved (they are shown again in the round after a restart).
    public static let savedExceptionLimit = 10_000

    public let mix: SelectionMix
    /// Portrait photos are shown two at a time.
    public let pairPortraits: Bool
    /// Whether a photo counts as a favourite (its rating, a star).
    public private(set) var favourite: [Bool] = []
    public internal(set) var roundNumber = 0
    var seed: UInt64 = 0
    /// The wall time ages are counted to in this round (the round's start).
    var reference: Double = 0
    var generator: SeededGenerator
    var streams = Array(repeating: Stream(), count: Kind.allCases.count)
    /// Days the on-this-day stream was made for before today's, with its threshold then.
    var pastDays: [(day: Int, threshold: Double)] = []
    var onThisDayFor: Int?
    var shown: [Bool] = []
    /// Photos that cannot be shown (they failed to decode): counted as shown in every round until replaced.
    var blocked: Set<Int32> = []
    var remaining = 0
    var drawn = 0
    public internal(set) var today: ShowDay?
    /// What each stream has earned and not yet been given (smooth weighted round robin).
    var credits = Array(repeating: 0.0, count: Kind.allCases.count)
    var lastTaken: Int32?

    public init(mix: SelectionMix = .plain, pairPortraits: Bool = false, seed: UInt64 = 0x5EED) {
        self.mix = mix
        self.pairPortraits = pairPortraits
        generator = SeededGenerator(seed: seed)
    }

    // MARK: - Keys

    static func scramble(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The photo's key in a stream, nil when it is not one of the stream's photos.
    func key(_ kind: Kind, _ index: Int32, in catalog: SlideCatalog) -> Double? {
        let traits = catalog.traits(at: index)
        switch kind {
        case .rest: break
        case .favourites: guard Int(index) < favourite.count, favourite[Int(index)] else { return nil }
        case .recent: guard traits.captured else { return nil }
        case .onThisDay:
            guard traits.captured, let today,
                today.isAnniversary(of: catalog.timestamp(at: index), leeway: mix.onThisDayDays)
            else { return nil }
        }
        let hash = Self.scramble(catalog.nameHash(at: index) ^ seed ^ kind.salt)
        guard kind == .recent else { return Double(hash >> 11) }
        let uniform = (Double(hash >> 11) + 0.5) / 9_007_199_254_740_992
        let age = max(0, (reference - catalog.timestamp(at: index)) / 86400)
        return SmallMath.log(-SmallMath.log(uniform)) + age / mix.recentDays * SmallMath.ln2
    }

    func isCandidate(_ index: Int32, in catalog: SlideCatalog) -> Bool {
        Int(index) < shown.count && !shown[Int(index)] && catalog.isLive(index)
    }

    // MARK: - Rounds

    /// Starts a round over the catalog's live photos.
    mutating func startRound(
        _ catalog: SlideCatalog, seed newSeed: UInt64? = nil, reference newReference: Double? = nil
    ) {
        roundNumber += 1
        seed = newSeed ?? generator.next()
        reference = newReference ?? today?.wallSeconds ?? 0
        drawn = 0
        pastDays = []
        onThisDayFor = nil
        growTables(to: catalog.capacity)
        for index in shown.indices { shown[index] = false }
        for index in blocked { shown[Int(index)] = true }
        remaining = catalog.byName.count(where: { !blocked.contains($0) })
        for kind in Kind.allCases { streams[kind.rawValue] = makeStream(kind, catalog) }
        onThisDayFor = today?.dayNumber
    }

    func makeStream(_ kind: Kind, _ catalog: SlideCatalog) -> Stream {
        var keyed: [(key: Double, index: Int32)] = []
        keyed.reserveCapacity(kind == .rest || kind == .recent ? catalog.count : 64)
        for index in catalog.byName {
            if let key = key(kind, index, in: catalog) { keyed.append((key, index)) }
        }
        keyed.sort { $0.key < $1.key }
        return Stream(order: keyed.map(\.index))
    }

    mutating func growTables(to capacity: Int) {
        if shown.count < capacity { shown += Array(repeating: false, count: capacity - shown.count) }
        if favourite.count < capacity { favourite += Array(repeating: false, count: capacity - favourite.count) }
    }

    /// Today's date changed (or was given first): the on-this-day stream is made for the new day; what it showed
    /// for the old one stays shown.
    public mutating func setToday(_ day: ShowDay, catalog: SlideCatalog) {
        today = day
        guard roundNumber > 0, onThisDayFor != day.dayNumber else { return }
        let old = streams[Kind.onThisDay.rawValue]
        if let previous = onThisDayFor, old.threshold > -Double.infinity {
            pastDays.append((previous, old.threshold))
        }
        var fresh = makeStream(.onThisDay, catalog)
        // Photos the old day's draw passed over for a pair still wait: in the new day's draw if they are its
        // anniversaries too, else in the rest's, so they stay among the saved exceptions.
        for waiting in old.joiners where isCandidate(waiting, in: catalog) {
            if key(.onThisDay, waiting, in: catalog) != nil {
                fresh.joiners.append(waiting)
            } else {
                streams[Kind.rest.rawValue].joiners.append(waiting)
            }
        }
        streams[Kind.onThisDay.rawValue] = fresh
        onThisDayFor = day.dayNumber
    }

    // MARK: - Drawing

    /// The next slide: a stream by the mix's shares, then its first photo not yet shown (an empty stream gives its
    /// turn to the rest). A new round starts when every photo has been shown. Nil only when nothing can be shown.
    public mutating func draw(_ catalog: SlideCatalog) -> Pick? {
        if roundNumber == 0 { startRound(catalog) }
        if remaining <= 0 {
            let last = lastTaken
            startRound(catalog)
            guard remaining > 0 else { return nil }
            // A round never starts with the photo that ended the one before.
            if let last, remaining > 1, isCandidate(last, in: catalog) {
                shown[Int(last)] = true
                remaining -= 1
                let pick = drawOne(catalog)
                shown[Int(last)] = false
                remaining += 1
                rejoin(last, catalog)
                return pick
            }
        }
        return drawOne(catalog)
    }

    /// Picks the stream by smooth weighted round robin (each stream earns its share every slide, the richest gives
    /// the slide and pays one): over any run of slides each share is within a slide of the mix, where a random roll
    /// per slide would stray by a point or two in a couple of thousand slides and bunch a share's slides together.
    /// A stream with nothing left this round earns nothing; its share is the rest's.
    private mutating func drawOne(_ catalog: SlideCatalog) -> Pick? {
        let shares = [mix.onThisDay, mix.favourites, mix.recent, mix.rest]
        var found: [Kind: (Int32, fromOrder: Bool)] = [:]
        for kind in Kind.allCases where shares[kind.rawValue] > 0 || kind == .rest {
            found[kind] = candidate(kind, catalog)
        }
        guard !found.isEmpty else { return nil }
        var spare = 0.0
        for kind in Kind.allCases where kind != .rest {
            if found[kind] == nil {
                spare += shares[kind.rawValue]
                credits[kind.rawValue] = 0
            } else {
                credits[kind.rawValue] += shares[kind.rawValue]
            }
        }
        credits[Kind.rest.rawValue] += shares[Kind.rest.rawValue] + spare
        // Ties (the first slides) go to the stream drawn by lot, so rounds do not all open with the same share.
        let tieBreak = Int(generator.next() % UInt64(Kind.allCases.count))
        let chosen =
            found.keys.max { a, b in
                let (ca, cb) = (credits[a.rawValue], credits[b.rawValue])
                if ca != cb { return ca < cb }
                return (a.rawValue + tieBreak) % 4 > (b.rawValue + tieBreak) % 4
            } ?? .rest
        credits[chosen.rawValue] -= 1
        guard let (first, fromOrder) = found[chosen] else { return nil }
        take(first, from: chosen, fromOrder: fromOrder, catalog)
        var photos = [first]
        if pairPortraits, catalog.traits(at: first).portrait, let partner = partner(in: chosen, catalog) {
            photos.append(partner)
        }
        drawn += 1
        lastTaken = photos.last
        return Pick(photos: photos, reason: chosen.reason, number: drawn)
    }

    /// The stream's first photo not shown: the earliest joiner or the next in its order, whichever has the lower key;
    /// `fromOrder` says it came from the order (its key becomes the threshold).
    private mutating func candidate(_ kind: Kind, _ catalog: SlideCatalog) -> (Int32, fromOrder: Bool)? {
        var stream = streams[kind.rawValue]
        // Passed over: photos shown by another stream, gone, or (a favourite unstarred since the stream was made)
        // no longer the stream's.
        while stream.next < stream.order.count,
            !isCandidate(stream.order[stream.next], in: catalog)
                || key(kind, stream.order[stream.next], in: catalog) == nil
        {
            stream.next += 1
        }
        stream.joiners.removeAll { !isCandidate($0, in: catalog) || key(kind, $0, in: catalog) == nil }
        streams[kind.rawValue] = stream
        let joiner = stream.joiners.map { ($0, key(kind, $0, in: catalog) ?? 0) }.min { $0.1 < $1.1 }
        guard stream.next < stream.order.count else { return joiner.map { ($0.0, false) } }
        let ordered = stream.order[stream.next]
        if let joiner, let orderedKey = key(kind, ordered, in: catalog), joiner.1 < orderedKey {
            return (joiner.0, false)
        }
        return (ordered, true)
    }

    private mutating func take(_ index: Int32, from kind: Kind, fromOrder: Bool, _ catalog: SlideCatalog) {
        shown[Int(index)] = true
        remaining -= 1
        guard fromOrder, let key = key(kind, index, in: catalog) else {
            streams[kind.rawValue].joiners.removeAll { $0 == index }
            return
        }
        streams[kind.rawValue].threshold = key
        streams[kind.rawValue].next += 1
    }

    /// A portrait partner for the photo just taken from `kind`: the next portrait photo of the same stream within a
    /// short look ahead (else of the rest). Photos passed over on the way become joiners, so they come next.
    private mutating func partner(in kind: Kind, _ catalog: SlideCatalog) -> Int32? {
        for searched in Set([kind, .rest]).sorted(by: { $0.rawValue < $1.rawValue }) {
            var stream = streams[searched.rawValue]
            var position = stream.next
            var looked = 0
            while position < stream.order.count, looked < Self.partnerLookahead {
                let index = stream.order[position]
                position += 1
                guard isCandidate(index, in: catalog), key(searched, index, in: catalog) != nil else { continue }
                looked += 1
                guard catalog.traits(at: index).portrait else { continue }
                // Everything between the stream's place and the partner waits as a joiner; the partner sets the
                // threshold.
                for skipped in stream.order[stream.next..<(position - 1)] where isCandidate(skipped, in: catalog) {
                    if key(searched, skipped, in: catalog) != nil { stream.joiners.append(skipped) }
                }
                stream.next = position
                stream.threshold = key(searched, index, in: catalog) ?? stream.threshold
                streams[searched.rawValue] = stream
                shown[Int(index)] = true
                remaining -= 1
                return index
            }
        }
        return nil
    }

    /// A photo not yet shown whose place in some stream is already passed: it waits in those streams as a joiner.
    mutating func rejoin(_ index: Int32, _ catalog: SlideCatalog) {
        for kind in Kind.allCases {
            guard let key = key(kind, index, in: catalog) else { continue }
            var stream = streams[kind.rawValue]
            if key <= stream.threshold {
                if !stream.joiners.contains(index) { stream.joiners.append(index) }
            } else if !stream.order[stream.next...].contains(index) {
                let position = insertionPoint(of: key, kind, in: stream, catalog)
                stream.order.insert(index, at: position)
            }
            streams[kind.rawValue] = stream
        }
    }

    private func insertionPoint(of key: Double, _ kind: Kind, in stream: Stream, _ catalog: SlideCatalog) -> Int {
        var low = stream.next
        var high = stream.order.count
        while low < high {
            let middle = (low + high) / 2
            if (self.key(kind, stream.order[middle], in: catalog) ?? -Double.infinity) < key {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    // MARK: - Changes

    /// Photos came (or were replaced: `replacing` maps a new index to the one it replaces). New ones join the
    /// round, wherever their keys fall; a replaced one keeps its place in the round.
    public mutating func added(_ indices: [Int32], replacing: [Int32: Int32] = [:], _ catalog: SlideCatalog) {
        guard roundNumber > 0 else { return }
        growTables(to: catalog.capacity)
        for index in indices {
            if let old = replacing[index], Int(old) < shown.count {
                favourite[Int(index)] = favourite[Int(old)]
                if shown[Int(old)] {
                    shown[Int(index)] = true
                    continue
                }
                // The old entry no longer waits; the new one does, in its place.
                shown[Int(old)] = true
                remaining -= 1
            }
            remaining += 1
            rejoin(index, catalog)
        }
    }

    /// Photos went: those not shown are no longer waited for.
    public mutating func removed(_ indices: Set<Int32>) {
        for index in indices where Int(index) < shown.count && !shown[Int(index)] {
            shown[Int(index)] = true
            remaining -= 1
        }
        blocked.subtract(indices)
    }

    /// A photo failed to decode: it is passed over until it is replaced.
    public mutating func block(_ index: Int32) {
        guard blocked.insert(index).inserted, Int(index) < shown.count else { return }
        if !shown[Int(index)] {
            shown[Int(index)] = true
            remaining -= 1
        }
    }

    /// A photo was shown outside the draw (asked for by hand, or resumed at): it counts as shown this round.
    public mutating func shownOutsideDraw(_ index: Int32) {
        guard roundNumber > 0, Int(index) < shown.count, !shown[Int(index)] else { return }
        shown[Int(index)] = true
        remaining -= 1
        drawn += 1
    }

    /// Whether a photo counts as a favourite changed (a star, a new rating).
    public mutating func setFavourite(_ index: Int32, _ isFavourite: Bool, _ catalog: SlideCatalog) {
        growTables(to: catalog.capacity)
        guard favourite[Int(index)] != isFavourite else { return }
        favourite[Int(index)] = isFavourite
        if isFavourite, roundNumber > 0, isCandidate(index, in: catalog) {
            streams[Kind.favourites.rawValue].joiners.append(index)
        }
    }

    /// The catalog dropped its removed entries: every index held here takes its new number.
    public mutating func renumber(_ renumbered: [Int32], capacity: Int) {
        func map(_ indices: [Int32]) -> [Int32] { indices.map { renumbered[Int($0)] }.filter { $0 >= 0 } }
        var newShown = Array(repeating: false, count: capacity)
        var newFavourite = Array(repeating: false, count: capacity)
        for (old, new) in renumbered.enumerated() where new >= 0 {
            if old < shown.count { newShown[Int(new)] = shown[old] }
            if old < favourite.count { newFavourite[Int(new)] = favourite[old] }
        }
        shown = newShown
        favourite = newFavourite
        for kind in Kind.allCases {
            var stream = streams[kind.rawValue]
            let passed = stream.order[..<stream.next].count { renumbered[Int($0)] >= 0 }
            stream.order = map(stream.order)
            stream.next = passed
            stream.joiners = map(stream.joiners)
            streams[kind.rawValue] = stream
        }
        blocked = Set(blocked.map { renumbered[Int($0)] }.filter { $0 >= 0 })
        lastTaken = lastTaken.map { renumbered[Int($0)] }.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// Photos left to show in this round.
    public var remainingInRound: Int { remaining }
    public var shownInRound: Int { drawn }

    public func wasShown(_ index: Int32) -> Bool { Int(index) < shown.count && shown[Int(index)] }
}
