/// The slides of the active category in play order, with rounds: `name` and `newest` repeat the same order,
/// `shuffle` plays every slide once per round in a fresh order that never starts with the slide that ended the
/// round before. A cursor marks the slide on screen; slides are found by identity, so photos coming and going
/// never make the show jump.
///
/// The slides live packed in a `SlideCatalog`; a round is a list of catalog indices (four bytes a slide), so a
/// 100,000-photo category costs a few megabytes and a batch of arrivals one pass over the round.
public struct Playlist: Sendable {
    public let order: PlaybackOrder
    public private(set) var catalog: SlideCatalog
    /// The current round, as catalog indices.
    private var roundIndices: [Int32] = []
    /// The next round, made as soon as the show looks past the end of this one.
    private var upcoming: [Int32]?
    /// Slides that failed to decode; skipped until they are replaced.
    private var broken: Set<Int32> = []
    /// Index in the round of the slide on screen.
    private var cursor: Int?
    /// The slide at `cursor` was removed; the one now at `cursor` is the next.
    private var cursorRemoved = false
    private var generator: SeededGenerator

    /// Removed entries are dropped from the catalog once they are this many and as many as the live ones.
    static let compactionFloor = 1024

    public init(slides: [Slide], order: PlaybackOrder, seed: UInt64 = 0x5EED) {
        self.init(catalog: SlideCatalog(slides), order: order, seed: seed)
    }

    public init(catalog: SlideCatalog, order: PlaybackOrder, seed: UInt64 = 0x5EED) {
        self.order = order
        self.catalog = catalog
        generator = SeededGenerator(seed: seed)
        roundIndices = arranged(catalog.byName, avoiding: nil)
    }

    public var isEmpty: Bool { roundIndices.isEmpty }
    public var count: Int { roundIndices.count }

    /// The current round's slides (made from the catalog: for tests and small lists).
    public var round: [Slide] { roundIndices.map { catalog.slide(at: $0) } }

    public func slide(_ id: SlideID) -> Slide? {
        catalog.index(of: id).map { catalog.slide(at: $0) }
    }

    private func playable(_ index: Int32) -> Bool { !broken.contains(index) }

    private mutating func arranged(_ indices: [Int32], avoiding last: Int32?) -> [Int32] {
        switch order {
        case .name:
            return indices.sorted { catalog.nameLess($0, $1) }
        case .newest:
            return indices.sorted { catalog.newerFirst($0, $1) }
        case .shuffle:
            var shuffled = indices.sorted { catalog.nameLess($0, $1) }.shuffled(using: &generator)
            if shuffled.count > 1, shuffled.first == last { shuffled.swapAt(0, shuffled.count - 1) }
            return shuffled
        }
    }

    private var nextStart: Int { cursor.map { cursorRemoved ? $0 : $0 + 1 } ?? 0 }

    private func position(of id: SlideID) -> Int? {
        catalog.index(of: id).flatMap { roundIndices.firstIndex(of: $0) }
    }

    /// The first playable slide of the round.
    public func first() -> SlideID? { roundIndices.first(where: playable).map(catalog.id(at:)) }

    /// The playable slide after the one on screen (or after `id`, when given and in the round); past the end of
    /// the round, the first of the next round. Nil only when nothing is playable.
    public mutating func next(after id: SlideID? = nil) -> SlideID? {
        let start = id.flatMap { position(of: $0).map { $0 + 1 } } ?? nextStart
        if let found = roundIndices[min(start, roundIndices.count)...].first(where: playable) {
            return catalog.id(at: found)
        }
        if upcoming == nil {
            upcoming = order == .shuffle ? arranged(roundIndices, avoiding: roundIndices.last) : roundIndices
        }
        return upcoming?.first(where: playable).map(catalog.id(at:))
    }

    /// The playable slide before the one on screen (or before `id`), wrapping to the end of the round.
    public func previous(before id: SlideID? = nil) -> SlideID? {
        guard let end = id.flatMap(position(of:)) ?? cursor else { return first() }
        let found =
            roundIndices[..<min(end, roundIndices.count)].last(where: playable) ?? roundIndices.last(where: playable)
        return found.map(catalog.id(at:))
    }

    /// The show now has `id` on screen; when it is the first of the next round, that round begins.
    public mutating func moveTo(_ id: SlideID) {
        let index = catalog.index(of: id)
        let restOfRound = roundIndices[min(nextStart, roundIndices.count)...].contains(where: playable)
        if let upcoming, !restOfRound, let index, upcoming.first(where: playable) == index {
            roundIndices = upcoming
            self.upcoming = nil
        }
        cursor = index.flatMap { roundIndices.firstIndex(of: $0) }
        cursorRemoved = false
    }

    /// Photos arrived (or were replaced): they join the current round without restarting it; in shuffle order
    /// they land somewhere after the slide on screen, so they are still shown this round. One pass over the round
    /// for the whole batch: an rsync of a thousand photos into a 100,000-photo category must not sort it a thousand
    /// times on the player's thread.
    public mutating func add(_ slides: [Slide]) {
        // A name twice in one batch: the last one counts.
        var last: [SlideID: Int] = [:]
        for (position, slide) in slides.enumerated() { last[slide.id] = position }
        let incoming = slides.enumerated().filter { last[$0.element.id] == $0.offset }.map(\.element)
        guard let category = incoming.first?.id.category else { return }
        if catalog.isEmpty, catalog.category != category {
            // An empty playlist (a category that could not be read) takes the category of its first photos.
            catalog = SlideCatalog(category: category, folder: catalog.folder)
            roundIndices = []
            upcoming = nil
            broken = []
            cursor = nil
        }
        // The slide at the cursor (on screen, or next when the one on screen went) is found again by index.
        let marked = cursor.flatMap { $0 < roundIndices.count ? roundIndices[$0] : nil }
        let before = incoming.map { catalog.index(of: $0.id) }
        let added = catalog.append(incoming)
        var replacedBy: [Int32: Int32] = [:]
        var fresh: [Int32] = []
        for (old, new) in zip(before, added) {
            if let old { replacedBy[old] = new } else { fresh.append(new) }
            if let old { broken.remove(old) }
        }
        switch order {
        case .name, .newest:
            // A replaced photo may move (a new capture date): it is taken out and merged in again like a new one.
            let arrivals = arranged(added, avoiding: nil)
            let gone = Set(replacedBy.keys)
            roundIndices = merged(gone.isEmpty ? roundIndices : roundIndices.filter { !gone.contains($0) }, arrivals)
            if let current = upcoming {
                upcoming = merged(gone.isEmpty ? current : current.filter { !gone.contains($0) }, arrivals)
            }
            let target = marked.map { replacedBy[$0] ?? $0 }
            if let target { cursor = roundIndices.firstIndex(of: target) }
        case .shuffle:
            if !replacedBy.isEmpty {
                roundIndices = roundIndices.map { replacedBy[$0] ?? $0 }
                upcoming = upcoming?.map { replacedBy[$0] ?? $0 }
            }
            let arrivals = arranged(fresh, avoiding: nil)
            guard !arrivals.isEmpty else { break }
            roundIndices = scattered(arrivals, into: roundIndices, from: min(nextStart, roundIndices.count))
            if let current = upcoming { upcoming = scattered(arrivals, into: current, from: 0) }
        }
        compactIfWorthIt()
    }

    /// `arrivals` merged into `existing`, both in the round's order.
    private func merged(_ existing: [Int32], _ arrivals: [Int32]) -> [Int32] {
        SlideCatalog.merged(existing, arrivals) { precedes($0, $1) }
    }

    private func precedes(_ a: Int32, _ b: Int32) -> Bool {
        order == .newest ? catalog.newerFirst(a, b) : catalog.nameLess(a, b)
    }

    /// `fresh` put at random places at or after `start` of `indices`, in one pass.
    private mutating func scattered(_ fresh: [Int32], into indices: [Int32], from start: Int) -> [Int32] {
        var places = fresh.map { _ in Int.random(in: start...indices.count, using: &generator) }
        places.sort()
        var result: [Int32] = []
        result.reserveCapacity(indices.count + fresh.count)
        var next = 0
        for position in 0...indices.count {
            while next < places.count, places[next] == position {
                result.append(fresh[next])
                next += 1
            }
            if position < indices.count { result.append(indices[position]) }
        }
        return result
    }

    /// Photos went away. If the one on screen went, the slide after it becomes the next.
    public mutating func remove(_ ids: Set<SlideID>) {
        let gone = Set(ids.compactMap { catalog.index(of: $0) })
        guard !gone.isEmpty else { return }
        if let current = cursor {
            let removedBefore = roundIndices[..<min(current, roundIndices.count)].reduce(0) {
                $0 + (gone.contains($1) ? 1 : 0)
            }
            if current < roundIndices.count, gone.contains(roundIndices[current]) { cursorRemoved = true }
            cursor = current - removedBefore
        }
        roundIndices.removeAll { gone.contains($0) }
        upcoming?.removeAll { gone.contains($0) }
        broken.subtract(gone)
        catalog.remove(gone)
        compactIfWorthIt()
    }

    /// Drops removed entries from the catalog once they weigh as much as the live ones (replaced photos leave
    /// one behind each), renumbering the rounds.
    private mutating func compactIfWorthIt() {
        guard catalog.removedCount >= Self.compactionFloor, catalog.removedCount >= catalog.count else { return }
        let (fresh, renumbered) = catalog.compacted()
        catalog = fresh
        roundIndices = roundIndices.map { renumbered[Int($0)] }
        upcoming = upcoming?.map { renumbered[Int($0)] }
        broken = Set(broken.map { renumbered[Int($0)] }.filter { $0 >= 0 })
    }

    public mutating func markBroken(_ id: SlideID) {
        if let index = catalog.index(of: id) { broken.insert(index) }
    }

    /// 1-based position of `id` in the round, for status lines.
    public func number(of id: SlideID) -> Int? {
        position(of: id).map { $0 + 1 }
    }
}
