import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Place indexes written in the test, in the `VGEO` format `Tests/Tools/build_places.py` writes (its docstring is
/// the description this follows, written anew here with glibc's trigonometry rather than the reader's own), so the
/// reader is tested against a writer it shares no code with.
public enum PlaceIndexFixture {
    public struct Entry: Sendable {
        public var name: String
        public var latitude: Double
        public var longitude: Double
        public var population: Int
        public var region: String
        public var countryCode: String
        public var country: String

        public init(
            _ name: String, _ latitude: Double, _ longitude: Double, population: Int = 1000, region: String = "",
            countryCode: String = "XX", country: String = "Testland"
        ) {
            self.name = name
            self.latitude = latitude
            self.longitude = longitude
            self.population = population
            self.region = region
            self.countryCode = countryCode
            self.country = country
        }
    }

    public static let attribution = "Place names: test data."

    /// The index of `entries`, as its bytes.
    public static func bytes(_ entries: [Entry], attribution: String = attribution, source: String = "a test")
        -> [UInt8]
    {
        var names: [UInt8] = []
        var offsets: [String: Int] = [:]
        func name(_ text: String) -> Int {
            if let offset = offsets[text] { return offset }
            let utf8 = Array(text.utf8.prefix(255))
            offsets[text] = names.count
            names.append(UInt8(utf8.count))
            names += utf8
            return offsets[text] ?? 0
        }
        let codes = Set(entries.map(\.countryCode)).sorted()
        var countries: [UInt8] = []
        for code in codes {
            let country = entries.first { $0.countryCode == code }?.country ?? code
            countries += le32(name(country)) + Array(code.utf8.prefix(2)) + le16(0)
        }
        let regionKeys = Set(entries.map { "\($0.countryCode)\u{0}\($0.region)" }).sorted()
        var regions: [UInt8] = []
        for key in regionKeys {
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
            regions += le32(name(parts[1])) + le16(codes.firstIndex(of: parts[0]) ?? 0) + le16(0)
        }
        var places: [UInt8] = []
        for entry in kdOrder(entries) {
            let region = regionKeys.firstIndex(of: "\(entry.countryCode)\u{0}\(entry.region)") ?? 0
            places += le32(Int(UInt32(bitPattern: Int32((entry.latitude * 1e6).rounded()))))
            places += le32(Int(UInt32(bitPattern: Int32((entry.longitude * 1e6).rounded()))))
            places += le32(name(entry.name)) + le16(region) + le16(populationCode(entry.population))
        }
        let credit = Array(attribution.utf8)
        let about = Array(source.utf8)
        let total = 64 + places.count + regions.count + countries.count + names.count + credit.count + about.count
        var header = Array("VGEO".utf8) + le16(1) + le16(64) + le32(total)
        header += le32(entries.count) + le32(regionKeys.count) + le32(codes.count) + le32(names.count)
        header += le32(credit.count) + le32(about.count)
        header += [UInt8](repeating: 0, count: 64 - header.count)
        return header + places + regions + countries + names + credit + about
    }

    /// 12 bits of mantissa under a 4-bit exponent, rounded to nearest, as the builder writes it.
    public static func populationCode(_ population: Int) -> Int {
        var exponent = max(0, (Int.bitWidth - population.leadingZeroBitCount) - 12)
        var mantissa = (population + ((1 << exponent) >> 1)) >> exponent
        if mantissa == 4096 {
            mantissa = 2048
            exponent += 1
        }
        return min(exponent, 15) << 12 | min(mantissa, 4095)
    }

    /// The implicit kd-tree: each range's middle splits it on axis depth % 3 of the unit vectors.
    static func kdOrder(_ entries: [Entry]) -> [Entry] {
        let points = entries.map { entry -> [Double] in
            let latitude = entry.latitude * Double.pi / 180
            let longitude = entry.longitude * Double.pi / 180
            return [cos(latitude) * cos(longitude), cos(latitude) * sin(longitude), sin(latitude)]
        }
        var order = [Int](repeating: 0, count: entries.count)
        func place(_ indices: [Int], start: Int, depth: Int) {
            guard !indices.isEmpty else { return }
            let axis = depth % 3
            let sorted = indices.sorted { (points[$0][axis], $0) < (points[$1][axis], $1) }
            let middle = sorted.count / 2
            order[start + middle] = sorted[middle]
            place(Array(sorted[..<middle]), start: start, depth: depth + 1)
            place(Array(sorted[(middle + 1)...]), start: start + middle + 1, depth: depth + 1)
        }
        place(Array(entries.indices), start: 0, depth: 0)
        return order.map { entries[$0] }
    }

    public static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    public static func le32(_ value: Int) -> [UInt8] { le16(value & 0xFFFF) + le16(value >> 16 & 0xFFFF) }

    /// A small world for the rules: a city with a district, the antimeridian, both poles, lone places for the
    /// distances.
    public static let world: [Entry] = [
        // Lyon and its first arrondissement (a GeoNames district with its own population), and Villeurbanne beside.
        Entry(
            "Lyon", 45.74846, 4.84671, population: 522_969, region: "Auvergne-Rhône-Alpes", countryCode: "FR",
            country: "France"),
        Entry(
            "Lyon 01", 45.76755, 4.83510, population: 29_640, region: "Auvergne-Rhône-Alpes", countryCode: "FR",
            country: "France"),
        Entry(
            "Villeurbanne", 45.76601, 4.87950, population: 150_659, region: "Auvergne-Rhône-Alpes", countryCode: "FR",
            country: "France"),
        // Less than ten times smaller than Lyon, 6.7 km away: named as itself.
        Entry(
            "Vaulx-en-Velin", 45.77944, 4.92, population: 60_000, region: "Auvergne-Rhône-Alpes", countryCode: "FR",
            country: "France"),
        // 7 km and 9 km due south of Lyon's point: the first is named Lyon, the second itself.
        Entry(
            "Near Suburb", 45.68551, 4.84671, population: 2000, region: "Auvergne-Rhône-Alpes", countryCode: "FR",
            country: "France"),
        Entry(
            "Far Suburb", 45.66752, 4.84671, population: 100, region: "Auvergne-Rhône-Alpes", countryCode: "FR",
            country: "France"),
        // Either side of the antimeridian, on Taveuni.
        Entry("Waiyevo", -16.79, 179.99, population: 2000, region: "Northern", countryCode: "FJ", country: "Fiji"),
        Entry("Somosomo", -16.77, -179.98, population: 1500, region: "Northern", countryCode: "FJ", country: "Fiji"),
        // Near both poles.
        Entry("Alert", 82.5018, -62.3481, population: 62, region: "Nunavut", countryCode: "CA", country: "Canada"),
        Entry("Pole Station", -89.9, 0, population: 150, region: "", countryCode: "AQ", country: "Antarctica"),
        // On the equator, alone, for the distances: 1° of longitude there is 111.195 km.
        Entry("Equator Town", 0, 10, population: 5000, region: "Middle", countryCode: "GA", country: "Gabon"),
        // 1.1 km from (0, 0), which is still no location.
        Entry("Zero Point", 0, 0.01, population: 1000, region: "", countryCode: "XX", country: "Testland"),
        Entry(
            "Singapore", 1.28967, 103.85007, population: 3_547_809, region: "", countryCode: "SG", country: "Singapore"),
    ]
}
