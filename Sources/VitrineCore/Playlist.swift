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

    /// A photo arrived (or was replaced): it joins the current round without restarting it; in shuffle order it
    /// lands somewhere after the slide on screen, so it is still shown this round.
    public mutating func add(_ slide: Slide) {
        broken.remove(slide.id)
        if let index = round.firstIndex(where: { $0.id == slide.id }) {
            round[index] = slide
            if let at = upcoming?.firstIndex(where: { $0.id == slide.id }) { upcoming?[at] = slide }
            return
        }
        let onScreen = cursor.flatMap { cursorRemoved ? nil : round[$0].id }
        switch order {
        case .name, .newest:
            round = arranged(round + [slide], avoiding: nil)
            if let current = upcoming { upcoming = arranged(current + [slide], avoiding: nil) }
            if let onScreen { cursor = round.firstIndex { $0.id == onScreen } }
        case .shuffle:
            let index = Int.random(in: min(nextStart, round.count)...round.count, using: &generator)
            round.insert(slide, at: index)
            if var current = upcoming {
                current.insert(slide, at: Int.random(in: 0...current.count, using: &generator))
                upcoming = current
            }
        }
    }

    /// A photo went away. If it was on screen, the slide after it becomes the next.
    public mutating func remove(_ id: SlideID) {
        if let index = round.firstIndex(where: { $0.id == id }) {
            round.remove(at: index)
            if let current = cursor {
                if index < current {
                    cursor = current - 1
                } else if index == current {
                    cursorRemoved = true
                }
            }
        }
        upcoming?.removeAll { $0.id == id }
        broken.remove(id)
    }

    public mutating func markBroken(_ id: SlideID) {
        broken.insert(id)
    }

    /// 1-based position of `id` in the round, for status lines.
    public func number(of id: SlideID) -> Int? {
        round.firstIndex { $0.id == id }.map { $0 + 1 }
    }
}
