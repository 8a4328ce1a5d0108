/// Which photos count as favourites: those rated `rating` stars or more in their XMP, and those starred on the
/// frame (web remote, MQTT, `vitrine ctl favourite`); a star taken away on the frame wins over the rating, since the
/// photo's file is never written.
public struct Favourites: Sendable, Equatable {
    /// Photos rated this or more are favourites.
    public var rating: Int
    public private(set) var starred: Set<SlideID> = []
    public private(set) var unstarred: Set<SlideID> = []

    public init(rating: Int = 4, starred: Set<SlideID> = [], unstarred: Set<SlideID> = []) {
        self.rating = rating
        self.starred = starred
        self.unstarred = unstarred
    }

    public func contains(_ id: SlideID, rating photoRating: Int?) -> Bool {
        starred.contains(id) || (!unstarred.contains(id) && (photoRating ?? 0) >= rating && photoRating != nil)
    }

    /// Stars or unstars a photo; returns whether anything changed.
    @discardableResult
    public mutating func set(_ id: SlideID, starred star: Bool, rating photoRating: Int?) -> Bool {
        let before = contains(id, rating: photoRating)
        starred.remove(id)
        unstarred.remove(id)
        let rated = photoRating.map { $0 >= rating } ?? false
        if star, !rated { starred.insert(id) }
        if !star, rated { unstarred.insert(id) }
        return before != star
    }

    /// The stars file: one line per photo, `+category/name` starred, `-category/name` unstarred (the category
    /// and the name separated by the first `/`, a photo in the library root written `+/name`).
    public var fileText: String {
        func line(_ sign: String, _ id: SlideID) -> String { "\(sign)\(id.category)/\(id.name)\n" }
        let sorted = { (ids: Set<SlideID>) in ids.sorted { $0.description < $1.description } }
        return sorted(starred).map { line("+", $0) }.joined() + sorted(unstarred).map { line("-", $0) }.joined()
    }

    /// Reads a stars file; lines that are not `+…` or `-…` with a `/` are skipped.
    public mutating func load(fileText text: String) {
        starred = []
        unstarred = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let sign = line.first, sign == "+" || sign == "-", let slash = line.firstIndex(of: "/") else {
                continue
            }
            let category = String(line[line.index(after: line.startIndex)..<slash])
            let name = String(line[line.index(after: slash)...])
            guard !name.isEmpty else { continue }
            let id = SlideID(category: category, name: name)
            if sign == "+" { starred.insert(id) } else { unstarred.insert(id) }
        }
    }
}
