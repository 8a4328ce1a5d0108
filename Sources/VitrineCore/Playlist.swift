/// The slides of the active category in play order, with rounds: `name` and `newest` repeat the same order,
/// `shuffle` plays every slide once per round in a fresh order that never starts with the slide that ended the
/// round before. A cursor marks the slide on screen; slides are found by identity, so photos coming and going
/// never make the show jump.
public struct Playlist: Sendable {
    public let order: PlaybackOrder
    /// The current round.
    public private(set) var round: [Slide] = []
    /// The next round, made as soon as the show looks past the end of this one.
    private var upcoming: [Slide]?
    /// Slides that failed to decode; skipped until they are replaced.
    public private(set) var broken: Set<SlideID> = []
    /// Index in `round` of the slide on screen.
    private var cursor: Int?
    /// The slide at `cursor` was removed; the one now at `cursor` is the next.
    private var cursorRemoved = false
    private var generator: SeededGenerator

    public init(slides: [Slide], order: PlaybackOrder, seed: UInt64 = 0x5EED) {
        self.order = order
        generator = SeededGenerator(seed: seed)
        round = arranged(slides, avoiding: nil)
    }

    public var isEmpty: Bool { round.isEmpty }
    public var count: Int { round.count }

    public func slide(_ id: SlideID) -> Slide? {
        round.first { $0.id == id } ?? upcoming?.first { $0.id == id }
    }

    private func playable(_ slide: Slide) -> Bool { !broken.contains(slide.id) }

    private mutating func arranged(_ slides: [Slide], avoiding last: SlideID?) -> [Slide] {
        switch order {
        case .name:
            return slides.sorted { NaturalOrder.less($0.id.name, $1.id.name) }
        case .newest:
            return slides.sorted(by: Slide.newerFirst)
        case .shuffle:
            var shuffled = slides.sorted { NaturalOrder.less($0.id.name, $1.id.name) }.shuffled(using: &generator)
            if shuffled.count > 1, shuffled.first?.id == last { shuffled.swapAt(0, shuffled.count - 1) }
            return shuffled
        }
    }

    private var nextStart: Int { cursor.map { cursorRemoved ? $0 : $0 + 1 } ?? 0 }

    /// The first playable slide of the round.
    public func first() -> SlideID? { round.first(where: playable)?.id }

    /// The playable slide after the one on screen (or after `id`, when given and in the round); past the end of
    /// the round, the first of the next round. Nil only when nothing is playable.
    public mutating func next(after id: SlideID? = nil) -> SlideID? {
        let start = id.flatMap { id in round.firstIndex { $0.id == id }.map { $0 + 1 } } ?? nextStart
        if let found = round[min(start, round.count)...].first(where: playable) { return found.id }
        if upcoming == nil { upcoming = order == .shuffle ? arranged(round, avoiding: round.last?.id) : round }
        return upcoming?.first(where: playable)?.id
    }

    /// The playable slide before the one on screen (or before `id`), wrapping to the end of the round.
    public func previous(before id: SlideID? = nil) -> SlideID? {
        guard let end = id.flatMap({ id in round.firstIndex { $0.id == id } }) ?? cursor else { return first() }
        return round[..<min(end, round.count)].last(where: playable)?.id ?? round.last(where: playable)?.id
    }

    /// The show now has `id` on screen; when it is the first of the next round, that round begins.
    public mutating func moveTo(_ id: SlideID) {
        let restOfRound = round[min(nextStart, round.count)...].contains(where: playable)
        if let upcoming, !restOfRound, upcoming.first(where: playable)?.id == id {
            round = upcoming
            self.upcoming = nil
        }
        cursor = round.firstIndex { $0.id == id }
        cursorRemoved = false
    }

    /// Photos arrived (or were replaced): they join the current round without restarting it; in shuffle order
    /// they land somewhere after the slide on screen, so they are still shown this round. One pass over the round
    /// for the whole batch: an rsync of a thousand photos into a 100,000-photo category must not sort it a thousand
    /// times on the player's thread.
    public mutating func add(_ slides: [Slide]) {
        guard !slides.isEmpty else { return }
        var incoming: [SlideID: Slide] = [:]
        for slide in slides {
            incoming[slide.id] = slide
            broken.remove(slide.id)
        }
        switch order {
        case .name, .newest:
            // The slide at the cursor (on screen, or next when the one on screen went) is found again by name.
            let marked = cursor.flatMap { $0 < round.count ? round[$0].id : nil }
            // A replaced photo may move (a new capture date): it is taken out and merged in again like a new one.
            let arrivals = arranged(Array(incoming.values), avoiding: nil)
            round = merged(round.filter { incoming[$0.id] == nil }, arrivals)
            if let current = upcoming { upcoming = merged(current.filter { incoming[$0.id] == nil }, arrivals) }
            if let marked { cursor = round.firstIndex { $0.id == marked } }
        case .shuffle:
            var fresh = incoming
            for index in round.indices {
                if let replacement = fresh.removeValue(forKey: round[index].id) { round[index] = replacement }
            }
            if var current = upcoming {
                for index in current.indices {
                    if let replacement = incoming[current[index].id] { current[index] = replacement }
                }
                upcoming = current
            }
            let arrivals = arranged(Array(fresh.values), avoiding: nil)
            guard !arrivals.isEmpty else { return }
            round = scattered(arrivals, into: round, from: min(nextStart, round.count))
            if let current = upcoming { upcoming = scattered(arrivals, into: current, from: 0) }
        }
    }

    /// `arrivals` merged into `existing`, both in the round's order, in one pass.
    private func merged(_ existing: [Slide], _ arrivals: [Slide]) -> [Slide] {
        var result: [Slide] = []
        result.reserveCapacity(existing.count + arrivals.count)
        var next = arrivals.startIndex
        for slide in existing {
            while next != arrivals.endIndex, precedes(arrivals[next], slide) {
                result.append(arrivals[next])
                next += 1
            }
            result.append(slide)
        }
        result.append(contentsOf: arrivals[next...])
        return result
    }

    private func precedes(_ a: Slide, _ b: Slide) -> Bool {
        order == .newest ? Slide.newerFirst(a, b) : NaturalOrder.less(a.id.name, b.id.name)
    }

    /// `fresh` put at random places at or after `start` of `slides`, in one pass.
    private mutating func scattered(_ fresh: [Slide], into slides: [Slide], from start: Int) -> [Slide] {
        var places = fresh.map { _ in Int.random(in: start...slides.count, using: &generator) }
        places.sort()
        var result: [Slide] = []
        result.reserveCapacity(slides.count + fresh.count)
        var next = 0
        for index in 0...slides.count {
            while next < places.count, places[next] == index {
                result.append(fresh[next])
                next += 1
            }
            if index < slides.count { result.append(slides[index]) }
        }
        return result
    }

    /// Photos went away. If the one on screen went, the slide after it becomes the next.
    public mutating func remove(_ ids: Set<SlideID>) {
        guard !ids.isEmpty else { return }
        if let current = cursor {
            let removedBefore = round[..<min(current, round.count)].reduce(0) { $0 + (ids.contains($1.id) ? 1 : 0) }
            if current < round.count, ids.contains(round[current].id) { cursorRemoved = true }
            cursor = current - removedBefore
        }
        round.removeAll { ids.contains($0.id) }
        upcoming?.removeAll { ids.contains($0.id) }
        broken.subtract(ids)
    }

    public mutating func markBroken(_ id: SlideID) {
        broken.insert(id)
    }

    /// 1-based position of `id` in the round, for status lines.
    public func number(of id: SlideID) -> Int? {
        round.firstIndex { $0.id == id }.map { $0 + 1 }
    }
}
