/// A place index that cannot be used, naming the file and what is wrong with it.
public struct PlaceIndexError: Error, Equatable, Sendable, CustomStringConvertible {
    public var file: String
    public var message: String

    public init(file: String, message: String) {
        self.file = file
        self.message = message
    }

    public var description: String { "\(file): \(message)" }
}

/// Where a photo was taken, as a caption says it.
public struct Place: Sendable, Equatable {
    /// The town or village; nil when the nearest is more than `PlaceIndex.namedWithin` away, where naming it would
    /// mislead (a photo from a ship, a summit, a desert).
    public var name: String?
    /// The first-level division (a state, region or province); may be empty.
    public var region: String
    public var country: String
    /// ISO 3166 alpha-2.
    public var countryCode: String
    /// From the photo to the place named, or to the nearest place when only the region is.
    public var kilometres: Double

    public init(name: String?, region: String, country: String, countryCode: String, kilometres: Double) {
        self.name = name
        self.region = region
        self.country = country
        self.countryCode = countryCode
        self.kilometres = kilometres
    }

    /// "Lyon, France"; "Central Jutland, Denmark" when only the region is known; a part equal to the one after it
    /// ("Singapore, Singapore") is said once.
    public var caption: String {
        var parts: [String] = []
        for part in [name ?? region, country] where !part.isEmpty && parts.last != part {
            parts.append(part)
        }
        return parts.joined(separator: ", ")
    }
}

/// The offline index of world places that `{place}` captions come from (`data/places.vgeo`, built by
/// `Tests/Tools/build_places.py`, whose docstring is the format's description), read in place from its bytes.
///
/// The header and the sections' sizes are checked when it is opened, and every offset and index read from a
/// record before it is followed, so a truncated or hostile file is an error naming the file, never a trap or a
/// read out of bounds. Records are read only as a lookup reaches them: opened from a memory map, a lookup touches a
/// few pages of the file, not all of it.
///
/// A lookup finds the nearest place on the sphere through the kd-tree the places are laid out as (a few dozen
/// records read), then applies the rules captions need: a place named within 25 km; only its region and country
/// within 100 km; nothing further away; nothing for exactly (0, 0), which cameras write without a fix. The nearest
/// place inside a city is often a district GeoNames lists separately ("Lyon 01", "Vallehermoso" in Madrid, "Årsta"
/// in Stockholm): a place of at least 100,000 people within 8 km that is at least ten times as populous as the
/// nearest one is named instead.
public struct PlaceIndex: @unchecked Sendable, Equatable {
    // @unchecked: `bytes` is never written (a read-only mapping, or a copy no one else holds) and lives as long as
    // `owner`, which every copy of the index keeps.

    public static let version = 1
    public static let namedWithin = 25.0
    public static let regionWithin = 100.0
    public static let bigCityWithin = 8.0
    public static let bigCityPopulation = 100_000
    public static let bigCityRatio = 10

    static let headerBytes = 64
    static let placeBytes = 16
    static let regionBytes = 8
    static let countryBytes = 8

    public let file: String
    public let placeCount: Int
    public let regionCount: Int
    public let countryCount: Int
    /// The credit the data's licence (CC BY 4.0) asks for, as the file carries it.
    public let attribution: String
    /// What the file was built from.
    public let source: String
    public var byteCount: Int { bytes.count }

    private let bytes: UnsafeRawBufferPointer
    private let owner: AnyObject?
    private let placesStart: Int
    private let regionsStart: Int
    private let countriesStart: Int
    private let namesStart: Int
    private let nameBytes: Int

    /// Reads the header of an index in `bytes`, which `owner` keeps alive and unchanged for as long as any copy of
    /// the index is used. `file` names the index in errors.
    public init(bytes: UnsafeRawBufferPointer, owner: AnyObject?, file: String) throws(PlaceIndexError) {
        self.bytes = bytes
        self.owner = owner
        self.file = file
        func fail(_ message: String) -> PlaceIndexError { PlaceIndexError(file: file, message: message) }
        guard bytes.count >= Self.headerBytes else {
            if bytes.isEmpty { throw fail("empty (not a place index)") }
            if bytes.count >= 4, !bytes.prefix(4).elementsEqual("VGEO".utf8) {
                throw fail("not a place index (no VGEO header)")
            }
            throw fail("truncated: \(bytes.count) bytes, shorter than the \(Self.headerBytes)-byte header")
        }
        guard bytes.prefix(4).elementsEqual("VGEO".utf8) else { throw fail("not a place index (no VGEO header)") }
        func u16(_ offset: Int) -> Int {
            Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
        }
        func u32(_ offset: Int) -> Int {
            Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        }
        let version = u16(4)
        guard version == Self.version else {
            throw fail(
                "format version \(version); this Vitrine reads version \(Self.version) (rebuild it with make places)")
        }
        let header = u16(6)
        let declared = u32(8)
        placeCount = u32(12)
        regionCount = u32(16)
        countryCount = u32(20)
        nameBytes = u32(24)
        let attributionBytes = u32(28)
        let sourceBytes = u32(32)
        guard header >= Self.headerBytes else {
            throw fail("header of \(header) bytes, expected \(Self.headerBytes) or more")
        }
        // Each section's end, in checked arithmetic: the counts are the file's, and may be anything.
        func end(_ start: Int, _ count: Int, _ size: Int) throws(PlaceIndexError) -> Int {
            let (length, overflow) = count.multipliedReportingOverflow(by: size)
            let (sum, overflowAgain) = start.addingReportingOverflow(length)
            guard !overflow, !overflowAgain else { throw fail("section sizes overflow") }
            return sum
        }
        placesStart = header
        regionsStart = try end(placesStart, placeCount, Self.placeBytes)
        countriesStart = try end(regionsStart, regionCount, Self.regionBytes)
        namesStart = try end(countriesStart, countryCount, Self.countryBytes)
        let attributionStart = try end(namesStart, nameBytes, 1)
        let sourceStart = try end(attributionStart, attributionBytes, 1)
        let total = try end(sourceStart, sourceBytes, 1)
        guard declared == bytes.count else {
            throw fail(
                declared > bytes.count
                    ? "truncated: \(bytes.count) of its \(declared) bytes"
                    : "\(bytes.count - declared) bytes after its declared end (\(declared) bytes)")
        }
        guard total == bytes.count else {
            throw fail("its sections add up to \(total) bytes, but it has \(bytes.count)")
        }
        attribution = String(decoding: bytes[attributionStart..<sourceStart], as: UTF8.self)
        source = String(decoding: bytes[sourceStart..<total], as: UTF8.self)
    }

    /// An index in a copy of `contents` (tests, and files read rather than mapped).
    public init(copying contents: [UInt8], file: String) throws(PlaceIndexError) {
        let storage = OwnedBytes(contents)
        let contentsOnly = UnsafeRawBufferPointer(rebasing: storage.bytes[0..<contents.count])
        try self.init(bytes: contentsOnly, owner: storage, file: file)
    }

    public static func == (left: PlaceIndex, right: PlaceIndex) -> Bool {
        left.file == right.file && left.bytes.baseAddress == right.bytes.baseAddress
            && left.bytes.count == right.bytes.count
    }

    // MARK: Lookup

    /// The place to name for a photo taken at `coordinate`, under the rules above; nil when there is none.
    public func lookup(_ coordinate: GeoCoordinate) throws(PlaceIndexError) -> Place? {
        guard !coordinate.isNullIsland else { return nil }
        let query = SphereMath.unitVector(latitude: coordinate.latitude, longitude: coordinate.longitude)
        var search = NearestSearch(query: query, limit: Self.regionChordSquared)
        search.run(self, 0, placeCount, 0)
        guard let nearest = search.found else { return nil }
        let kilometres = SphereMath.kilometres(chordSquared: search.best)
        guard kilometres <= Self.regionWithin else { return nil }
        guard kilometres <= Self.namedWithin else {
            var place = try describe(nearest)
            place.name = nil
            place.kilometres = kilometres
            return place
        }
        var chosen = (index: nearest, chordSquared: search.best)
        let floor = max(Self.bigCityPopulation, population(at: nearest).saturatingTimes(Self.bigCityRatio))
        var cities = BigCitySearch(query: query, limit: Self.bigCityChordSquared, population: floor)
        cities.run(self, 0, placeCount, 0)
        if let city = cities.found { chosen = (city, cities.chordSquared) }
        var place = try describe(chosen.index)
        place.kilometres = SphereMath.kilometres(chordSquared: chosen.chordSquared)
        return place
    }

    /// The nearest place by reading every record: the reference a lookup is measured and tested against.
    public func nearestByScan(_ coordinate: GeoCoordinate) -> (index: Int, kilometres: Double)? {
        let query = SphereMath.unitVector(latitude: coordinate.latitude, longitude: coordinate.longitude)
        var best = Double.infinity
        var found: Int?
        for index in 0..<placeCount {
            let distance = chordSquared(from: query, to: index)
            if distance < best {
                best = distance
                found = index
            }
        }
        return found.map { ($0, SphereMath.kilometres(chordSquared: best)) }
    }

    /// The nearest place through the tree, with no rule applied (tests hold it to `nearestByScan`).
    public func nearest(_ coordinate: GeoCoordinate) -> (index: Int, kilometres: Double)? {
        let query = SphereMath.unitVector(latitude: coordinate.latitude, longitude: coordinate.longitude)
        var search = NearestSearch(query: query, limit: .infinity)
        search.run(self, 0, placeCount, 0)
        return search.found.map { ($0, SphereMath.kilometres(chordSquared: search.best)) }
    }

    /// Record `index` as a place (its name always given), `kilometres` 0.
    public func describe(_ index: Int) throws(PlaceIndexError) -> Place {
        guard index >= 0, index < placeCount else { throw failure("no place \(index) (it has \(placeCount))") }
        let record = placesStart + index * Self.placeBytes
        let name = try text(at: u32(record + 8), of: "place \(index)")
        let region = u16(record + 12)
        guard region < regionCount else {
            throw failure("place \(index) names region \(region), but there are \(regionCount)")
        }
        let regionRecord = regionsStart + region * Self.regionBytes
        let regionName = try text(at: u32(regionRecord), of: "region \(region)")
        let country = u16(regionRecord + 4)
        guard country < countryCount else {
            throw failure("region \(region) names country \(country), but there are \(countryCount)")
        }
        let countryRecord = countriesStart + country * Self.countryBytes
        let countryName = try text(at: u32(countryRecord), of: "country \(country)")
        let code = String(decoding: bytes[(countryRecord + 4)..<(countryRecord + 6)], as: UTF8.self)
        return Place(name: name, region: regionName, country: countryName, countryCode: code, kilometres: 0)
    }

    /// Where record `index` is; nil for no such record.
    public func coordinate(at index: Int) -> GeoCoordinate? {
        guard index >= 0, index < placeCount else { return nil }
        let record = placesStart + index * Self.placeBytes
        return GeoCoordinate(latitude: Double(i32(record)) / 1e6, longitude: Double(i32(record + 4)) / 1e6)
    }

    /// The population of record `index`, as the file rounds it (to 1/4096).
    public func population(at index: Int) -> Int {
        guard index >= 0, index < placeCount else { return 0 }
        let code = u16(placesStart + index * Self.placeBytes + 14)
        return (code & 0xFFF) << (code >> 12)
    }

    /// Reads every record and name, for `check-config` and the tests: a lookup checks only what it reads.
    public func validate() throws(PlaceIndexError) {
        for index in 0..<placeCount {
            let record = placesStart + index * Self.placeBytes
            let latitude = i32(record)
            let longitude = i32(record + 4)
            guard abs(latitude) <= 90_000_000, abs(longitude) <= 180_000_000 else {
                throw failure("place \(index) is at \(latitude), \(longitude) microdegrees, off the globe")
            }
            _ = try describe(index)
        }
        for region in 0..<regionCount {
            let record = regionsStart + region * Self.regionBytes
            _ = try text(at: u32(record), of: "region \(region)")
            guard u16(record + 4) < countryCount else {
                throw failure("region \(region) names country \(u16(record + 4)), but there are \(countryCount)")
            }
        }
        for country in 0..<countryCount {
            let record = countriesStart + country * Self.countryBytes
            _ = try text(at: u32(record), of: "country \(country)")
            guard bytes[(record + 4)..<(record + 6)].allSatisfy({ (0x41...0x5A).contains($0) }) else {
                throw failure("country \(country) has no ISO 3166 code")
            }
        }
    }

    // MARK: Records

    static let regionChordSquared = SphereMath.chordSquared(kilometres: regionWithin)
    static let bigCityChordSquared = SphereMath.chordSquared(kilometres: bigCityWithin)

    private func failure(_ message: String) -> PlaceIndexError { PlaceIndexError(file: file, message: message) }

    private func u16(_ offset: Int) -> Int {
        Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
    }

    private func u32(_ offset: Int) -> Int {
        Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    }

    private func i32(_ offset: Int) -> Int {
        Int(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
    }

    /// A name: a byte count, then that many bytes of UTF-8, inside the names section.
    private func text(at offset: Int, of owner: String) throws(PlaceIndexError) -> String {
        guard offset < nameBytes else {
            throw failure("\(owner)'s name is at byte \(offset) of the names, which have \(nameBytes)")
        }
        let start = namesStart + offset
        let length = Int(bytes[start])
        guard offset + 1 + length <= nameBytes else {
            throw failure("\(owner)'s name of \(length) bytes runs past the end of the names")
        }
        return String(decoding: bytes[(start + 1)..<(start + 1 + length)], as: UTF8.self)
    }

    fileprivate func point(_ index: Int) -> (x: Double, y: Double, z: Double) {
        let record = placesStart + index * Self.placeBytes
        return SphereMath.unitVector(latitude: Double(i32(record)) / 1e6, longitude: Double(i32(record + 4)) / 1e6)
    }

    fileprivate func chordSquared(from query: (x: Double, y: Double, z: Double), to index: Int) -> Double {
        let p = point(index)
        let (dx, dy, dz) = (query.x - p.x, query.y - p.y, query.z - p.z)
        return dx * dx + dy * dy + dz * dz
    }
}

/// Storage for `PlaceIndex(copying:)`, freed with the last copy of the index.
private final class OwnedBytes {
    let bytes: UnsafeMutableRawBufferPointer

    init(_ contents: [UInt8]) {
        bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, contents.count), alignment: 16)
        contents.withUnsafeBytes { bytes.copyMemory(from: $0) }
        if contents.isEmpty { bytes.storeBytes(of: 0, as: UInt8.self) }
    }

    deinit { bytes.deallocate() }
}

/// The component of a point on a kd-tree axis.
private func component(_ point: (x: Double, y: Double, z: Double), _ axis: Int) -> Double {
    axis == 0 ? point.x : axis == 1 ? point.y : point.z
}

/// The nearest record to `query` closer than `limit` (a squared chord), through the implicit tree: the record in
/// the middle of a range splits it on axis `depth % 3`; the far half is searched only when the splitting plane is
/// nearer than the best found so far.
private struct NearestSearch {
    let query: (x: Double, y: Double, z: Double)
    var best: Double
    var found: Int?

    init(query: (x: Double, y: Double, z: Double), limit: Double) {
        self.query = query
        best = limit
    }

    mutating func run(_ index: PlaceIndex, _ low: Int, _ high: Int, _ axis: Int) {
        guard low < high else { return }
        let middle = low + (high - low) / 2
        let point = index.point(middle)
        let (dx, dy, dz) = (query.x - point.x, query.y - point.y, query.z - point.z)
        let distance = dx * dx + dy * dy + dz * dz
        if distance < best {
            best = distance
            found = middle
        }
        let side = component(query, axis) - component(point, axis)
        let next = axis == 2 ? 0 : axis + 1
        if side < 0 {
            run(index, low, middle, next)
            if side * side < best { run(index, middle + 1, high, next) }
        } else {
            run(index, middle + 1, high, next)
            if side * side < best { run(index, low, middle, next) }
        }
    }
}

/// The most populous record within `limit` (a squared chord) of `query` with at least `population` people (the
/// nearer of two equal ones).
private struct BigCitySearch {
    let query: (x: Double, y: Double, z: Double)
    let limit: Double
    let population: Int
    var found: Int?
    var foundPopulation = 0
    var chordSquared = Double.infinity

    init(query: (x: Double, y: Double, z: Double), limit: Double, population: Int) {
        self.query = query
        self.limit = limit
        self.population = population
    }

    mutating func run(_ index: PlaceIndex, _ low: Int, _ high: Int, _ axis: Int) {
        guard low < high else { return }
        let middle = low + (high - low) / 2
        let point = index.point(middle)
        let (dx, dy, dz) = (query.x - point.x, query.y - point.y, query.z - point.z)
        let distance = dx * dx + dy * dy + dz * dz
        if distance <= limit {
            let people = index.population(at: middle)
            if people >= population,
                people > foundPopulation || (people == foundPopulation && distance < chordSquared)
            {
                found = middle
                foundPopulation = people
                chordSquared = distance
            }
        }
        let side = component(query, axis) - component(point, axis)
        let next = axis == 2 ? 0 : axis + 1
        if side < 0 || side * side <= limit { run(index, low, middle, next) }
        if side >= 0 || side * side <= limit { run(index, middle + 1, high, next) }
    }
}
