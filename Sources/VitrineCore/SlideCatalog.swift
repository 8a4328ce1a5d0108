/// The slides of one category, packed so that a 100,000-photo folder costs tens of bytes a photo instead of
/// hundreds: a photo is its name and its original's file-name tail (`.jpg`) in one shared byte buffer plus an
/// eight-byte record, and its renditions (`NAME@WxH.jpg`, as `vitrine renditions` names them) four bytes each; its
/// `Slide` is made when asked for. Slides that do not pack (portrait pairs, renditions named otherwise or kept in
/// the rendition cache, a file outside the category folder) are kept whole on the side.
///
/// Entries are never moved: a removed one is marked, so indices held elsewhere (a playlist's rounds) stay valid
/// until `compacted()` renumbers them. `byName` lists the live entries in natural order of their names, for lookups
/// by identity.
public struct SlideCatalog: Sendable {
    struct Entry: Sendable {
        var start: UInt32
        var nameLength: UInt16
        /// The original's file name after the slide's name (`.jpg`); 0 when the slide is kept whole.
        var tailLength: UInt8
        var flags: UInt8

        static let removed: UInt8 = 1
        static let whole: UInt8 = 2
        /// Renditions only: `NAME.jpg` itself is not there.
        static let noOriginal: UInt8 = 4
    }

    public let category: String
    /// The category's folder: a packed slide's original is `folder/NAME.tail`.
    public let folder: String
    private var text: [UInt8] = []
    private var entries: [Entry] = []
    /// Capture times for `newest` order; empty while every slide's is 0.
    private var timestamps: [Double] = []
    /// Per entry; empty while every slide's are the default.
    private var traitBytes: [UInt8] = []
    private var wholeSlides: [Int32: Slide] = [:]
    /// Per entry, 0 for no renditions, else 1 + where its run starts in `renditionSizes`; empty while no entry has
    /// a packed rendition.
    private var renditionRuns: [UInt32] = []
    /// Each run: the count, then each size as `width << 16 | height`.
    private var renditionSizes: [UInt32] = []
    /// Live entries in natural order of their names.
    public private(set) var byName: [Int32] = []
    public private(set) var removedCount = 0

    public init(category: String, folder: String) {
        self.category = category
        self.folder = folder
    }

    /// A catalog of `slides` (of one category); `folder` lets plain photos pack.
    public init(_ slides: [Slide], folder: String = "") {
        self.init(category: slides.first?.id.category ?? "", folder: folder)
        append(slides)
    }

    public var count: Int { byName.count }
    public var isEmpty: Bool { byName.isEmpty }
    /// Every index ever handed out, live or removed (the bound for per-entry tables kept elsewhere).
    public var capacity: Int { entries.count }

    public func isLive(_ index: Int32) -> Bool { entries[Int(index)].flags & Entry.removed == 0 }

    /// The live slides in natural order of their names.
    public var slides: [Slide] { byName.map { slide(at: $0) } }

    public func slide(at index: Int32) -> Slide {
        let entry = entries[Int(index)]
        if entry.flags & Entry.whole != 0, let whole = wholeSlides[index] { return whole }
        let name = self.name(of: entry)
        let tail = String(decoding: tailBytes(of: entry), as: UTF8.self)
        let renditions = packedRenditions(at: index).map { size in
            Slide.Rendition(path: Self.renditionPath(folder: folder, name: name, size: size), size: size)
        }
        var slide = Slide(
            id: SlideID(category: category, name: name),
            original: entry.flags & Entry.noOriginal != 0 ? nil : "\(folder)/\(name)\(tail)", renditions: renditions,
            timestamp: timestamp(at: index))
        slide.traits = traits(at: index)
        return slide
    }

    public func id(at index: Int32) -> SlideID {
        if entries[Int(index)].flags & Entry.whole != 0, let whole = wholeSlides[index] { return whole.id }
        return SlideID(category: category, name: name(of: entries[Int(index)]))
    }

    public func timestamp(at index: Int32) -> Double { timestamps.isEmpty ? 0 : timestamps[Int(index)] }

    public mutating func setTimestamp(_ seconds: Double, at index: Int32) {
        if timestamps.isEmpty {
            guard seconds != 0 else { return }
            timestamps = Array(repeating: 0, count: entries.count)
        }
        timestamps[Int(index)] = seconds
        if entries[Int(index)].flags & Entry.whole != 0 { wholeSlides[index]?.timestamp = seconds }
    }

    public func traits(at index: Int32) -> SlideTraits {
        traitBytes.isEmpty ? SlideTraits() : SlideTraits(rawValue: traitBytes[Int(index)])
    }

    public mutating func setTraits(_ traits: SlideTraits, at index: Int32) {
        if traitBytes.isEmpty {
            guard traits.rawValue != 0 else { return }
            traitBytes = Array(repeating: 0, count: entries.count)
        }
        traitBytes[Int(index)] = traits.rawValue
        if entries[Int(index)].flags & Entry.whole != 0 { wholeSlides[index]?.traits = traits }
    }

    /// A hash of the slide's name (FNV-1a), the same in every run: the selection engine's draw order comes from it.
    public func nameHash(at index: Int32) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in nameBytes(of: index) {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    /// Where a packed rendition is: `folder/NAME@WxH.jpg`.
    static func renditionPath(folder: String, name: String, size: Size) -> String {
        "\(folder)/\(name)@\(size.width)x\(size.height).jpg"
    }

    private func packedRenditions(at index: Int32) -> [Size] {
        guard !renditionRuns.isEmpty, renditionRuns[Int(index)] > 0 else { return [] }
        let start = Int(renditionRuns[Int(index)] - 1)
        let count = Int(renditionSizes[start])
        return renditionSizes[start + 1..<start + 1 + count].map {
            Size(width: Int($0 >> 16), height: Int($0 & 0xFFFF))
        }
    }

    /// The renditions of a slide named `name` that pack (every one named `NAME@WxH.jpg` in the category folder,
    /// sides below 65,536); nil when one does not.
    private func packable(_ renditions: [Slide.Rendition], name: String) -> [Size]? {
        var sizes: [Size] = []
        for rendition in renditions {
            guard rendition.size.width > 0, rendition.size.width <= 0xFFFF, rendition.size.height > 0,
                rendition.size.height <= 0xFFFF,
                rendition.path == Self.renditionPath(folder: folder, name: name, size: rendition.size)
            else { return nil }
            sizes.append(rendition.size)
        }
        return sizes
    }

    /// Appends a record with its timestamp and renditions, keeping the per-entry tables as long as `entries`.
    private mutating func appendEntry(
        _ entry: Entry, timestamp: Double, renditions: [Size], traits: SlideTraits = SlideTraits()
    ) {
        entries.append(entry)
        if !traitBytes.isEmpty || traits.rawValue != 0 {
            if traitBytes.isEmpty { traitBytes = Array(repeating: 0, count: entries.count - 1) }
            traitBytes.append(traits.rawValue)
        }
        if !timestamps.isEmpty || timestamp != 0 {
            if timestamps.isEmpty { timestamps = Array(repeating: 0, count: entries.count - 1) }
            timestamps.append(timestamp)
        }
        if !renditionRuns.isEmpty || !renditions.isEmpty {
            if renditionRuns.isEmpty { renditionRuns = Array(repeating: 0, count: entries.count - 1) }
            if renditions.isEmpty {
                renditionRuns.append(0)
            } else {
                renditionRuns.append(UInt32(renditionSizes.count + 1))
                renditionSizes.append(UInt32(renditions.count))
                renditionSizes += renditions.map { UInt32($0.width) << 16 | UInt32($0.height) }
            }
        }
    }

    /// The live entry named `id`, found by binary search over `byName`.
    public func index(of id: SlideID) -> Int32? {
        guard id.category == category else { return nil }
        return index(named: Array(id.name.utf8))
    }

    private func index(named name: [UInt8]) -> Int32? {
        let position = insertionPoint(forName: name)
        guard position < byName.count, nameBytesEqual(byName[position], name) else { return nil }
        return byName[position]
    }

    /// The first position in `byName` whose name is not before `name`.
    private func insertionPoint(forName name: [UInt8]) -> Int {
        var low = 0
        var high = byName.count
        while low < high {
            let middle = (low + high) / 2
            if nameLess(byName[middle], name) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The path of the slide's first file inside the category folder (the whole path for a file elsewhere): the
    /// key the header cache is sorted by.
    public func firstFileKey(at index: Int32) -> ArraySlice<UInt8> {
        let entry = entries[Int(index)]
        if entry.flags & (Entry.whole | Entry.noOriginal) == 0 {
            let start = Int(entry.start)
            return text[start..<start + Int(entry.nameLength) + Int(entry.tailLength)]
        }
        let file = slide(at: index).files.first ?? ""
        let prefix = folder + "/"
        return ArraySlice(file.hasPrefix(prefix) ? Array(file.utf8.dropFirst(prefix.utf8.count)) : Array(file.utf8))
    }

    /// Whether two entries' slides are made of the same files (replaced photos are told by this).
    public func sameFiles(_ index: Int32, as other: SlideCatalog, _ otherIndex: Int32) -> Bool {
        let mine = entries[Int(index)]
        let theirs = other.entries[Int(otherIndex)]
        if mine.flags & Entry.whole == 0, theirs.flags & Entry.whole == 0, folder == other.folder {
            return mine.flags & Entry.noOriginal == theirs.flags & Entry.noOriginal
                && tailBytes(of: mine).elementsEqual(other.tailBytes(of: theirs))
                && packedRenditions(at: index) == other.packedRenditions(at: otherIndex)
        }
        return slide(at: index).files == other.slide(at: otherIndex).files
    }

    // MARK: - Changes

    /// Adds slides (of this category; a name already here is replaced) and returns their indices.
    @discardableResult
    public mutating func append(_ slides: [Slide]) -> [Int32] {
        var added: [Int32] = []
        added.reserveCapacity(slides.count)
        var replaced: Set<Int32> = []
        // A name twice in one batch: the last one counts.
        var last: [SlideID: Int] = [:]
        for (position, slide) in slides.enumerated() { last[slide.id] = position }
        for (position, slide) in slides.enumerated() where last[slide.id] == position {
            if let existing = index(of: slide.id) { replaced.insert(existing) }
            added.append(store(slide))
        }
        if !replaced.isEmpty { remove(replaced) }
        let sortedAdded = added.sorted { nameLess($0, $1) }
        byName = merged(byName, sortedAdded)
        return added
    }

    /// Room for `count` more entries and `bytes` more name bytes, so a packed listing is not grown by doubling.
    package mutating func reserveCapacity(entries count: Int, textBytes bytes: Int) {
        entries.reserveCapacity(entries.count + count)
        byName.reserveCapacity(byName.count + count)
        text.reserveCapacity(text.count + bytes)
    }

    /// Adds a photo whose name comes after every name here (a sorted listing is being packed): its original's
    /// tail (nil when only renditions are there) and its renditions' sizes (named `NAME@WxH.jpg` beside it).
    package mutating func appendInNameOrder(name: ArraySlice<UInt8>, tail: ArraySlice<UInt8>?, renditions: [Size] = [])
    {
        guard name.count <= Int(UInt16.max), (tail?.count ?? 0) <= Int(UInt8.max),
            text.count + name.count + (tail?.count ?? 0) < Int(UInt32.max),
            renditions.allSatisfy({ $0.width <= 0xFFFF && $0.height <= 0xFFFF })
        else {
            let nameText = String(decoding: name, as: UTF8.self)
            appendInNameOrder(
                Slide(
                    id: SlideID(category: category, name: nameText),
                    original: tail.map { "\(folder)/\(nameText)\(String(decoding: $0, as: UTF8.self))" },
                    renditions: renditions.map {
                        Slide.Rendition(path: Self.renditionPath(folder: folder, name: nameText, size: $0), size: $0)
                    }))
            return
        }
        let index = Int32(entries.count)
        let entry = Entry(
            start: UInt32(text.count), nameLength: UInt16(name.count), tailLength: UInt8(tail?.count ?? 0),
            flags: tail == nil ? Entry.noOriginal : 0)
        text.append(contentsOf: name)
        if let tail { text.append(contentsOf: tail) }
        appendEntry(entry, timestamp: 0, renditions: renditions.sorted { $0.pixelCount < $1.pixelCount })
        byName.append(index)
    }

    /// Adds a slide whose name comes after every name here.
    package mutating func appendInNameOrder(_ slide: Slide) {
        byName.append(store(slide))
    }

    /// Marks entries removed and takes them out of `byName`.
    public mutating func remove(_ indices: Set<Int32>) {
        var count = 0
        for index in indices where isLive(index) {
            entries[Int(index)].flags |= Entry.removed
            wholeSlides[index] = nil
            count += 1
        }
        guard count > 0 else { return }
        removedCount += count
        let entries = self.entries
        byName.removeAll { entries[Int($0)].flags & Entry.removed != 0 }
    }

    /// A copy without removed entries, and each old index's new one (-1 for removed).
    public func compacted() -> (catalog: SlideCatalog, renumbered: [Int32]) {
        var fresh = SlideCatalog(category: category, folder: folder)
        var renumbered = [Int32](repeating: -1, count: entries.count)
        fresh.text.reserveCapacity(text.count)
        fresh.entries.reserveCapacity(count)
        for index in byName {
            renumbered[Int(index)] = Int32(fresh.entries.count)
            fresh.copyEntry(index, from: self)
        }
        fresh.byName = byName.map { renumbered[Int($0)] }
        return (fresh, renumbered)
    }

    private mutating func copyEntry(_ index: Int32, from other: SlideCatalog) {
        let entry = other.entries[Int(index)]
        let newIndex = Int32(entries.count)
        let start = Int(entry.start)
        let copy = Entry(
            start: UInt32(text.count), nameLength: entry.nameLength, tailLength: entry.tailLength, flags: entry.flags)
        text.append(contentsOf: other.text[start..<start + Int(entry.nameLength) + Int(entry.tailLength)])
        appendEntry(
            copy, timestamp: other.timestamp(at: index), renditions: other.packedRenditions(at: index),
            traits: other.traits(at: index))
        if let whole = other.wholeSlides[index] { wholeSlides[newIndex] = whole }
    }

    /// Stores one slide as a new entry (not yet in `byName`).
    private mutating func store(_ slide: Slide) -> Int32 {
        let index = Int32(entries.count)
        let name = Array(slide.id.name.utf8)
        // The original's tail (empty with no original), when the slide packs.
        var tail: [UInt8]?
        let renditions = slide.photos.count == 1 ? packable(slide.renditions, name: slide.id.name) : nil
        if renditions != nil, let original = slide.original {
            let prefix = folder.utf8.count + 1 + name.count
            let bytes = Array(original.utf8)
            if bytes.count > prefix, bytes.count - prefix <= Int(UInt8.max), original.hasPrefix("\(folder)/"),
                bytes[folder.utf8.count + 1..<prefix].elementsEqual(name)
            {
                tail = Array(bytes[prefix...])
            }
        } else if let renditions, !renditions.isEmpty {
            tail = []
        }
        // Past these limits (never met by real folders) a slide is simply kept whole.
        let fits = name.count <= Int(UInt16.max) && text.count + name.count + 256 < Int(UInt32.max)
        var entry = Entry(start: UInt32(truncatingIfNeeded: text.count), nameLength: 0, tailLength: 0, flags: 0)
        if fits {
            entry.nameLength = UInt16(name.count)
            text.append(contentsOf: name)
        }
        if fits, let tail, let renditions {
            entry.tailLength = UInt8(tail.count)
            if slide.original == nil { entry.flags = Entry.noOriginal }
            text.append(contentsOf: tail)
            appendEntry(entry, timestamp: slide.timestamp, renditions: renditions, traits: slide.traits)
        } else {
            entry.flags = Entry.whole
            wholeSlides[index] = slide
            appendEntry(entry, timestamp: slide.timestamp, renditions: [], traits: slide.traits)
        }
        return index
    }

    // MARK: - Names

    private func name(of entry: Entry) -> String {
        let start = Int(entry.start)
        return String(decoding: text[start..<start + Int(entry.nameLength)], as: UTF8.self)
    }

    private func nameBytes(of index: Int32) -> ArraySlice<UInt8> {
        let entry = entries[Int(index)]
        if entry.nameLength == 0, entry.flags & Entry.whole != 0, let whole = wholeSlides[index] {
            return ArraySlice(whole.id.name.utf8)
        }
        let start = Int(entry.start)
        return text[start..<start + Int(entry.nameLength)]
    }

    private func tailBytes(of entry: Entry) -> ArraySlice<UInt8> {
        let start = Int(entry.start) + Int(entry.nameLength)
        return text[start..<start + Int(entry.tailLength)]
    }

    private func nameBytesEqual(_ index: Int32, _ name: [UInt8]) -> Bool {
        nameBytes(of: index).elementsEqual(name)
    }

    func nameLess(_ index: Int32, _ name: [UInt8]) -> Bool {
        NaturalOrder.less(bytes: nameBytes(of: index), name[...])
    }

    public func nameLess(_ first: Int32, _ second: Int32) -> Bool {
        NaturalOrder.less(bytes: nameBytes(of: first), nameBytes(of: second))
    }

    /// `newest` order: later capture first, then by name.
    public func newerFirst(_ first: Int32, _ second: Int32) -> Bool {
        let (a, b) = (timestamp(at: first), timestamp(at: second))
        return a != b ? a > b : nameLess(first, second)
    }

    /// Two lists of indices, each in name order, merged.
    private func merged(_ existing: [Int32], _ arrivals: [Int32]) -> [Int32] {
        Self.merged(existing, arrivals) { nameLess($0, $1) }
    }

    /// `arrivals` merged into `existing`, both sorted by `precedes`; an arrival goes after the existing entries it
    /// ties with. Each arrival's place is found by binary search, so a thousand arrivals in a 100,000-slide list
    /// cost some 17,000 comparisons and one copy instead of 100,000 comparisons.
    public static func merged(
        _ existing: [Int32], _ arrivals: [Int32], by precedes: (Int32, Int32) -> Bool
    ) -> [Int32] {
        guard !arrivals.isEmpty else { return existing }
        var result: [Int32] = []
        result.reserveCapacity(existing.count + arrivals.count)
        var low = 0
        for arrival in arrivals {
            var high = existing.count
            var first = low
            while first < high {
                let middle = (first + high) / 2
                if precedes(arrival, existing[middle]) { high = middle } else { first = middle + 1 }
            }
            result.append(contentsOf: existing[low..<first])
            result.append(arrival)
            low = first
        }
        result.append(contentsOf: existing[low...])
        return result
    }
}
