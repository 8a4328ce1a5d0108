/// `shuffle`'s playlist: slides as the selection engine draws them, and the ones shown, to go back through. A slide
/// drawn is held until it is shown (the next one is drawn early, so its picture is ready in time); a portrait pair
/// is made when it is drawn, and known by both names.
public struct DrawnPlaylist: Sendable {
    struct Entry: Sendable, Equatable {
        var pick: SelectionEngine.Pick
        var id: SlideID
    }

    /// Shown slides kept to go back to.
    static let historyLimit = 500

    public private(set) var catalog: SlideCatalog
    public private(set) var engine: SelectionEngine
    public private(set) var favourites: Favourites
    private var history: [Entry] = []
    private var ahead: [Entry] = []
    /// Where in `history` the slide on screen is; −1 before the first (or when the first shown went).
    private var place = -1

    public init(
        catalog: SlideCatalog, mix: SelectionMix = .plain, pairPortraits: Bool = false,
        favourites: Favourites = Favourites(), seed: UInt64 = 0x5EED, today: ShowDay? = nil,
        saved: SelectionState? = nil
    ) {
        self.catalog = catalog
        self.favourites = favourites
        engine = SelectionEngine(mix: mix, pairPortraits: pairPortraits, seed: seed)
        for index in catalog.byName
        where favourites.contains(catalog.id(at: index), rating: catalog.traits(at: index).rating) {
            engine.setFavourite(index, true, catalog)
        }
        if let today { engine.setToday(today, catalog: catalog) }
        if let saved, engine.restore(saved, catalog) { return }
        engine.startRound(catalog)
    }

    public var isEmpty: Bool { catalog.isEmpty }
    public var count: Int { catalog.count }

    private func entryID(_ pick: SelectionEngine.Pick) -> SlideID {
        guard pick.photos.count == 2 else { return catalog.id(at: pick.photos[0]) }
        return SlideID(
            category: catalog.category,
            name: "\(catalog.id(at: pick.photos[0]).name) + \(catalog.id(at: pick.photos[1]).name)")
    }

    private func entry(_ id: SlideID) -> Entry? {
        ahead.first { $0.id == id } ?? history.last { $0.id == id }
    }

    public func slide(_ id: SlideID) -> Slide? {
        if let index = catalog.index(of: id) { return catalog.slide(at: index) }
        guard let pair = entry(id)?.pick.photos, pair.count == 2 else { return nil }
        return Slide(pairing: catalog.slide(at: pair[0]), with: catalog.slide(at: pair[1]))
    }

    /// Why the slide was chosen, and its place in the round.
    public func pick(of id: SlideID) -> SelectionEngine.Pick? { entry(id)?.pick }

    /// Draws until `count` slides wait; fewer when nothing more can be shown.
    private mutating func fillAhead(_ count: Int) {
        while ahead.count < count, let pick = engine.draw(catalog) {
            ahead.append(Entry(pick: pick, id: entryID(pick)))
        }
    }

    public mutating func first() -> SlideID? {
        if let first = history.first { return first.id }
        fillAhead(1)
        return ahead.first?.id
    }

    /// The slide after `id` (after the one on screen when nil): the next shown one when going forward again through
    /// those shown, else the next drawn.
    public mutating func next(after id: SlideID? = nil) -> SlideID? {
        let start = id ?? (place >= 0 && place < history.count ? history[place].id : nil)
        if let start, let found = ahead.firstIndex(where: { $0.id == start }) {
            fillAhead(found + 2)
            return found + 1 < ahead.count ? ahead[found + 1].id : nil
        }
        let position = start.flatMap { id in history.lastIndex { $0.id == id } } ?? (start == nil ? place : nil)
        if let position, position + 1 < history.count { return history[position + 1].id }
        fillAhead(1)
        return ahead.first?.id
    }

    /// The slide shown before `id` (before the one on screen when nil); nil at the start of what is kept.
    public func previous(before id: SlideID? = nil) -> SlideID? {
        if let id, let found = ahead.firstIndex(where: { $0.id == id }) {
            return found > 0 ? ahead[found - 1].id : history.last?.id
        }
        let position = id.flatMap { id in history.lastIndex { $0.id == id } } ?? place
        guard position > 0, position - 1 < history.count else { return nil }
        return history[position - 1].id
    }

    /// The show now has `id` on screen.
    public mutating func moveTo(_ id: SlideID) {
        if let found = ahead.firstIndex(where: { $0.id == id }) {
            // Slides drawn before it and passed over by a quick "next" count as shown.
            history += ahead[...found]
            ahead.removeFirst(found + 1)
            place = history.count - 1
        } else if let found = history.lastIndex(where: { $0.id == id }) {
            place = found
        } else if let index = catalog.index(of: id) {
            engine.shownOutsideDraw(index)
            history.append(
                Entry(pick: SelectionEngine.Pick(photos: [index], reason: .chosen, number: engine.shownInRound), id: id)
            )
            place = history.count - 1
        }
        if history.count > Self.historyLimit + 50 {
            let dropped = history.count - Self.historyLimit
            history.removeFirst(dropped)
            place -= dropped
        }
    }

    /// Photos arrived (or were replaced): new ones join the round wherever their draw puts them.
    public mutating func add(_ slides: [Slide]) {
        let before = slides.map { catalog.index(of: $0.id) }
        let added = catalog.append(slides)
        var replacing: [Int32: Int32] = [:]
        var renamed: [Int32: Int32] = [:]
        for (old, new) in zip(before, added) {
            if let old {
                replacing[new] = old
                renamed[old] = new
            }
        }
        engine.added(added, replacing: replacing, catalog)
        for index in added {
            let isFavourite = favourites.contains(catalog.id(at: index), rating: catalog.traits(at: index).rating)
            engine.setFavourite(index, isFavourite, catalog)
        }
        if !renamed.isEmpty {
            func update(_ entries: inout [Entry]) {
                for position in entries.indices {
                    entries[position].pick.photos = entries[position].pick.photos.map { renamed[$0] ?? $0 }
                }
            }
            update(&history)
            update(&ahead)
        }
        compactIfWorthIt()
    }

    /// Photos went; a slide drawn with one of them is drawn again.
    public mutating func remove(_ ids: Set<SlideID>) {
        let gone = Set(ids.compactMap { catalog.index(of: $0) })
        guard !gone.isEmpty else { return }
        engine.removed(gone)
        catalog.remove(gone)
        dropEntries { !gone.isDisjoint(with: $0.pick.photos) }
        compactIfWorthIt()
    }

    public mutating func markBroken(_ id: SlideID) {
        let photos = catalog.index(of: id).map { [$0] } ?? entry(id)?.pick.photos ?? []
        for index in photos { engine.block(index) }
        // A pair with a broken photo is drawn again; its other photo waits for a later draw.
        ahead.removeAll { !Set(photos).isDisjoint(with: $0.pick.photos) }
    }

    private mutating func dropEntries(where isGone: (Entry) -> Bool) {
        ahead.removeAll(where: isGone)
        let removedBefore = history.prefix(max(0, place + 1)).count(where: isGone)
        history.removeAll(where: isGone)
        place -= removedBefore
    }

    public func number(of id: SlideID) -> Int? { entry(id)?.pick.number }

    /// Today's date (the runtime tells at start and when the day turns).
    public mutating func setToday(_ day: ShowDay) {
        engine.setToday(day, catalog: catalog)
    }

    /// A photo was starred or unstarred.
    public mutating func setFavourites(_ newFavourites: Favourites) {
        let old = favourites
        favourites = newFavourites
        // A star touches its photo only; a new rating threshold touches every photo.
        let indices: [Int32]
        if old.rating != newFavourites.rating {
            indices = catalog.byName
        } else {
            let changed = old.starred.symmetricDifference(newFavourites.starred)
                .union(old.unstarred.symmetricDifference(newFavourites.unstarred))
            indices = changed.compactMap { catalog.index(of: $0) }
        }
        for index in indices {
            engine.setFavourite(
                index, favourites.contains(catalog.id(at: index), rating: catalog.traits(at: index).rating), catalog)
        }
    }

    /// The round for saving with the position.
    public func savedState() -> SelectionState? {
        engine.snapshot(category: catalog.category, waiting: ahead.flatMap(\.pick.photos), catalog)
    }

    private mutating func compactIfWorthIt() {
        guard catalog.removedCount >= Playlist.compactionFloor, catalog.removedCount >= catalog.count else { return }
        let (fresh, renumbered) = catalog.compacted()
        catalog = fresh
        engine.renumber(renumbered, capacity: fresh.capacity)
        func update(_ entries: inout [Entry]) {
            for position in entries.indices {
                entries[position].pick.photos = entries[position].pick.photos.map { renumbered[Int($0)] }
            }
        }
        update(&history)
        update(&ahead)
    }
}
