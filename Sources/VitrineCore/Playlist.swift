/// The slides of the active category in play order: `name` and `newest` repeat the same order round after round,
/// `shuffle` is what the selection engine draws (`DrawnPlaylist`), every slide once per round. A cursor marks the
/// slide on screen; slides are found by identity, so photos coming and going never make the show jump.
///
/// The slides live packed in a `SlideCatalog`; a round is a list of catalog indices (four bytes a slide), so a
/// 100,000-photo category costs a few megabytes and a batch of arrivals one pass over the round.
public struct Playlist: Sendable {
    public let order: PlaybackOrder
    /// `shuffle`'s slides; nil in the other orders.
    public private(set) var drawn: DrawnPlaylist?
    private var listed: SlideCatalog
    public var catalog: SlideCatalog { drawn?.catalog ?? listed }
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

    /// Removed entries are dropped from the catalog once they are this many and as many as the live ones.
    static let compactionFloor = 1024

    public init(slides: [Slide], order: PlaybackOrder, seed: UInt64 = 0x5EED) {
        self.init(catalog: SlideCatalog(slides), order: order, seed: seed)
    }

    public init(catalog: SlideCatalog, order: PlaybackOrder, seed: UInt64 = 0x5EED) {
        self.init(catalog: catalog, order: order, selection: Selection(seed: seed))
    }

    /// What `shuffle` draws with, besides the catalog.
    public struct Selection: Sendable {
        public var mix: SelectionMix
        public var pairPortraits: Bool
        public var favourites: Favourites
        public var seed: UInt64
        public var today: ShowDay?
        /// A round saved with the position, taken up when it is of this category.
        public var saved: SelectionState?

        public init(
            mix: SelectionMix = .plain, pairPortraits: Bool = false, favourites: Favourites = Favourites(),
            seed: UInt64 = 0x5EED, today: ShowDay? = nil, saved: SelectionState? = nil
        ) {
            self.mix = mix
            self.pairPortraits = pairPortraits
            self.favourites = favourites
            self.seed = seed
            self.today = today
            self.saved = saved
        }
    }

    public init(catalog: SlideCatalog, order: PlaybackOrder, selection: Selection) {
        self.order = order
        guard order == .shuffle else {
            listed = catalog
            roundIndices = arranged(catalog.byName)
            return
        }
        listed = SlideCatalog(category: catalog.category, folder: catalog.folder)
        drawn = DrawnPlaylist(
            catalog: catalog, mix: selection.mix, pairPortraits: selection.pairPortraits,
            favourites: selection.favourites, seed: selection.seed, today: selection.today, saved: selection.saved)
    }

    public var isEmpty: Bool { drawn?.isEmpty ?? roundIndices.isEmpty }
    public var count: Int { drawn?.count ?? roundIndices.count }

    /// The current round's slides in `name` or `newest` order (made from the catalog: for tests and small lists).
    public var round: [Slide] { roundIndices.map { listed.slide(at: $0) } }

    public func slide(_ id: SlideID) -> Slide? {
        if let drawn { return drawn.slide(id) }
        return listed.index(of: id).map { listed.slide(at: $0) }
    }

    /// Why the slide is in the show: its draw in `shuffle`, its place in the other orders.
    public func reason(of id: SlideID) -> SelectionReason? {
        if let drawn { return drawn.pick(of: id)?.reason }
        return listed.index(of: id) == nil ? nil : .order
    }

    private func playable(_ index: Int32) -> Bool { !broken.contains(index) }

    private func arranged(_ indices: [Int32]) -> [Int32] {
        order == .newest ? indices.sorted { listed.newerFirst($0, $1) } : indices.sorted { listed.nameLess($0, $1) }
    }

    private var nextStart: Int { cursor.map { cursorRemoved ? $0 : $0 + 1 } ?? 0 }

    private func position(of id: SlideID) -> Int? {
        listed.index(of: id).flatMap { roundIndices.firstIndex(of: $0) }
    }

    /// The first playable slide of the round.
    public mutating func first() -> SlideID? {
        if drawn != nil { return drawn?.first() }
        return roundIndices.first(where: playable).map(listed.id(at:))
    }

    /// The playable slide after the one on screen (or after `id`, when given and in the round); past the end of
    /// the round, the first of the next round. Nil only when nothing is playable.
    public mutating func next(after id: SlideID? = nil) -> SlideID? {
        if drawn != nil { return drawn?.next(after: id) }
        let start = id.flatMap { position(of: $0).map { $0 + 1 } } ?? nextStart
        if let found = roundIndices[min(start, roundIndices.count)...].first(where: playable) {
            return listed.id(at: found)
        }
        if upcoming == nil { upcoming = roundIndices }
        return upcoming?.first(where: playable).map(listed.id(at:))
    }

    /// The playable slide before the one on screen (or before `id`), wrapping to the end of the round.
    public func previous(before id: SlideID? = nil) -> SlideID? {
        if let drawn { return drawn.previous(before: id) }
        guard let end = id.flatMap(position(of:)) ?? cursor else {
            return roundIndices.first(where: playable).map(listed.id(at:))
        }
        let found =
            roundIndices[..<min(end, roundIndices.count)].last(where: playable) ?? roundIndices.last(where: playable)
        return found.map(listed.id(at:))
    }

    /// The show now has `id` on screen; when it is the first of the next round, that round begins.
    public mutating func moveTo(_ id: SlideID) {
        if drawn != nil {
            drawn?.moveTo(id)
            return
        }
        let index = listed.index(of: id)
        let restOfRound = roundIndices[min(nextStart, roundIndices.count)...].contains(where: playable)
        if let upcoming, !restOfRound, let index, upcoming.first(where: playable) == index {
            roundIndices = upcoming
            self.upcoming = nil
        }
        cursor = index.flatMap { roundIndices.firstIndex(of: $0) }
        cursorRemoved = false
    }

    /// Photos arrived (or were replaced): they join the current round without restarting it, in their place in
    /// the order. One pass over the round for the whole batch: an rsync of a thousand photos into a 100,000-photo
    /// category must not sort it a thousand times on the player's thread.
    public mutating func add(_ slides: [Slide]) {
        if drawn != nil {
            drawn?.add(slides)
            return
        }
        // A name twice in one batch: the last one counts.
        var last: [SlideID: Int] = [:]
        for (position, slide) in slides.enumerated() { last[slide.id] = position }
        let incoming = slides.enumerated().filter { last[$0.element.id] == $0.offset }.map(\.element)
        guard let category = incoming.first?.id.category else { return }
        if listed.isEmpty, listed.category != category {
            // An empty playlist (a category that could not be read) takes the category of its first photos.
            listed = SlideCatalog(category: category, folder: listed.folder)
            roundIndices = []
            upcoming = nil
            broken = []
            cursor = nil
        }
        // The slide at the cursor (on screen, or next when the one on screen went) is found again by index.
        let marked = cursor.flatMap { $0 < roundIndices.count ? roundIndices[$0] : nil }
        let before = incoming.map { listed.index(of: $0.id) }
        let added = listed.append(incoming)
        var replacedBy: [Int32: Int32] = [:]
        for (old, new) in zip(before, added) {
            if let old {
                replacedBy[old] = new
                broken.remove(old)
            }
        }
        // A replaced photo may move (a new capture date): it is taken out and merged in again like a new one.
        let arrivals = arranged(added)
        let gone = Set(replacedBy.keys)
        roundIndices = merged(gone.isEmpty ? roundIndices : roundIndices.filter { !gone.contains($0) }, arrivals)
        if let current = upcoming {
            upcoming = merged(gone.isEmpty ? current : current.filter { !gone.contains($0) }, arrivals)
        }
        let target = marked.map { replacedBy[$0] ?? $0 }
        if let target { cursor = roundIndices.firstIndex(of: target) }
        compactIfWorthIt()
    }

    /// `arrivals` merged into `existing`, both in the round's order.
    private func merged(_ existing: [Int32], _ arrivals: [Int32]) -> [Int32] {
        SlideCatalog.merged(existing, arrivals) { precedes($0, $1) }
    }

    private func precedes(_ a: Int32, _ b: Int32) -> Bool {
        order == .newest ? listed.newerFirst(a, b) : listed.nameLess(a, b)
    }

    /// Photos went away. If the one on screen went, the slide after it becomes the next.
    public mutating func remove(_ ids: Set<SlideID>) {
        if drawn != nil {
            drawn?.remove(ids)
            return
        }
        let gone = Set(ids.compactMap { listed.index(of: $0) })
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
        listed.remove(gone)
        compactIfWorthIt()
    }

    /// Drops removed entries from the catalog once they weigh as much as the live ones (replaced photos leave
    /// one behind each), renumbering the rounds.
    private mutating func compactIfWorthIt() {
        guard listed.removedCount >= Self.compactionFloor, listed.removedCount >= listed.count else { return }
        let (fresh, renumbered) = listed.compacted()
        listed = fresh
        roundIndices = roundIndices.map { renumbered[Int($0)] }
        upcoming = upcoming?.map { renumbered[Int($0)] }
        broken = Set(broken.map { renumbered[Int($0)] }.filter { $0 >= 0 })
    }

    public mutating func markBroken(_ id: SlideID) {
        if drawn != nil {
            drawn?.markBroken(id)
            return
        }
        if let index = listed.index(of: id) { broken.insert(index) }
    }

    /// 1-based position of `id` in the round, for status lines.
    public func number(of id: SlideID) -> Int? {
        if let drawn { return drawn.number(of: id) }
        return position(of: id).map { $0 + 1 }
    }

    /// Today's date, for `shuffle`'s "on this day".
    public mutating func setToday(_ day: ShowDay) {
        drawn?.setToday(day)
    }

    public mutating func setFavourites(_ favourites: Favourites) {
        drawn?.setFavourites(favourites)
    }

    /// `shuffle`'s round, to be saved with the position.
    public func savedSelection() -> SelectionState? { drawn?.savedState() }
}
