import Testing
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The place index over indexes written in the test (`PlaceIndexFixture`): the rules captions need, the tree
/// against reading every record, and files cut short or corrupted anywhere.
@Suite struct PlaceIndexTests {
    let world: PlaceIndex

    init() throws {
        world = try PlaceIndex(copying: PlaceIndexFixture.bytes(PlaceIndexFixture.world), file: "world.vgeo")
    }

    static func at(_ latitude: Double, _ longitude: Double) throws -> GeoCoordinate {
        try #require(GeoCoordinate(latitude: latitude, longitude: longitude))
    }

    /// Great-circle distance by the haversine formula with glibc's functions: an oracle that shares nothing with
    /// the index's chord and its own trigonometry.
    static func haversine(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let radians = Double.pi / 180
        let dLatitude = (b.0 - a.0) * radians
        let dLongitude = (b.1 - a.1) * radians
        let h =
            sin(dLatitude / 2) * sin(dLatitude / 2)
            + cos(a.0 * radians) * cos(b.0 * radians) * sin(dLongitude / 2) * sin(dLongitude / 2)
        return 2 * 6371.0088 * Glibc.asin(min(1, h.squareRoot()))
    }

    @Test func theTrigonometryMatchesGlibc() {
        var worst = 0.0
        for step in -4000...4000 {
            let degrees = Double(step) * 0.1234567
            let (sine, cosine) = SphereMath.sinCos(degrees: degrees)
            let radians = degrees * Double.pi / 180
            worst = max(worst, abs(sine - sin(radians)), abs(cosine - cos(radians)))
        }
        #expect(worst < 1e-14)
        #expect(SphereMath.sinCos(degrees: 90) == (1, 0))
        #expect(SphereMath.sinCos(degrees: -180).cos == -1)
        worst = 0
        for step in -1000...1000 {
            let x = Double(step) / 1000
            worst = max(worst, abs(SphereMath.asin(x) - Glibc.asin(x)))
        }
        #expect(worst < 1e-14)
        #expect(SphereMath.asin(2) == SphereMath.asin(1))
    }

    @Test func namesTheCityNotItsDistrict() throws {
        // The nearest place is the district Lyon 01 (0.4 km); Lyon, 18 times as populous, is 1.9 km away.
        let place = try #require(try world.lookup(Self.at(45.764, 4.8357)))
        #expect(place.name == "Lyon")
        #expect(place.caption == "Lyon, France")
        #expect(place.region == "Auvergne-Rhône-Alpes")
        #expect(place.countryCode == "FR")
        #expect(abs(place.kilometres - Self.haversine((45.764, 4.8357), (45.74846, 4.84671))) < 0.001)
        // Villeurbanne has 150,000 people, Lyon not ten times as many: it keeps its name, as does Vaulx-en-Velin.
        #expect(try world.lookup(Self.at(45.76601, 4.8795))?.name == "Villeurbanne")
        #expect(try world.lookup(Self.at(45.77944, 4.92))?.name == "Vaulx-en-Velin")
        // A village 7 km from the city's point is named after the city; one 9 km away after itself.
        let near = try #require(try world.lookup(Self.at(45.68551, 4.84671)))
        #expect(near.name == "Lyon")
        #expect(abs(near.kilometres - 7) < 0.01)
        #expect(try world.lookup(Self.at(45.66752, 4.84671))?.name == "Far Suburb")
    }

    @Test func namesWithin25KilometresAndTheRegionWithin100() throws {
        let kilometresPerDegree = 2 * Double.pi * 6371.0088 / 360
        func lookup(kilometresEast kilometres: Double) throws -> Place? {
            try world.lookup(Self.at(0, 10 + kilometres / kilometresPerDegree))
        }
        let named = try #require(try lookup(kilometresEast: 24.9))
        #expect(named.name == "Equator Town" && named.caption == "Equator Town, Gabon")
        #expect(abs(named.kilometres - 24.9) < 0.001)
        let region = try #require(try lookup(kilometresEast: 25.1))
        #expect(region.name == nil && region.caption == "Middle, Gabon")
        #expect(abs(region.kilometres - 25.1) < 0.001)
        #expect(try lookup(kilometresEast: 99.9)?.caption == "Middle, Gabon")
        #expect(try lookup(kilometresEast: 100.1) == nil)
        // A place without a region beyond 25 km: the country alone.
        #expect(try world.lookup(Self.at(0, 0.5))?.caption == "Testland")
    }

    @Test func zeroZeroIsNoLocation() throws {
        #expect(try world.lookup(Self.at(0, 0)) == nil)
        #expect(try world.lookup(Self.at(0.0001, 0))?.name == "Zero Point")
        #expect(world.nearest(try Self.at(0, 0))?.kilometres ?? 0 > 1)
    }

    @Test func findsTheNearestAcrossTheAntimeridian() throws {
        // West of the line, the nearest place is east of it, and the other way round.
        for (latitude, longitude, expected) in [
            (-16.79, -179.995, "Waiyevo"), (-16.77, 179.999, "Somosomo"), (-16.79, 180, "Waiyevo"),
            (-16.77, -180, "Somosomo"),
        ] {
            let place = try #require(try world.lookup(Self.at(latitude, longitude)))
            #expect(place.name == expected, "\(latitude), \(longitude)")
            let entry = try #require(PlaceIndexFixture.world.first { $0.name == expected })
            let distance = Self.haversine((latitude, longitude), (entry.latitude, entry.longitude))
            #expect(abs(place.kilometres - distance) < 0.001)
            #expect(place.kilometres < 3)
        }
    }

    @Test func worksAtThePoles() throws {
        // The North Pole is 834 km from Alert, too far for a caption, but the tree still finds it.
        let north = try #require(world.nearest(Self.at(90, 0)))
        #expect(try world.describe(north.index).name == "Alert")
        #expect(abs(north.kilometres - Self.haversine((90, 0), (82.5018, -62.3481))) < 0.001)
        #expect(try world.lookup(Self.at(90, 0)) == nil)
        #expect(try world.lookup(Self.at(89.999, 123)) == nil)
        // At the South Pole every longitude is the same point; across it, 0.05° + 0.1° is 16.7 km.
        #expect(try world.lookup(Self.at(-90, 0))?.caption == "Pole Station, Antarctica")
        #expect(try world.lookup(Self.at(-90, 137))?.name == "Pole Station")
        let across = try #require(try world.lookup(Self.at(-89.95, 180)))
        #expect(abs(across.kilometres - 0.15 * 2 * Double.pi * 6371.0088 / 360) < 0.001)
    }

    @Test func aNameEqualToItsCountryIsSaidOnce() throws {
        #expect(try world.lookup(Self.at(1.29, 103.85))?.caption == "Singapore")
        #expect(Place(name: nil, region: "", country: "Fiji", countryCode: "FJ", kilometres: 30).caption == "Fiji")
    }

    @Test func theHeaderCarriesTheAttributionAndCounts() {
        #expect(world.attribution == PlaceIndexFixture.attribution)
        #expect(world.source == "a test")
        #expect(world.placeCount == PlaceIndexFixture.world.count)
        #expect(world.countryCount == 7)
        #expect(throws: Never.self) { try world.validate() }
    }

    /// Thousands of random places, and points near them and anywhere: the tree finds the place reading every
    /// record finds, at the distance an independent formula gives.
    @Test func theTreeFindsWhatAScanFinds() throws {
        var generator = SeededGenerator(seed: 7)
        func random() -> Double { Double(generator.next() >> 11) / Double(1 << 53) }
        func anywhere() -> (Double, Double) { (Glibc.asin(2 * random() - 1) * 180 / Double.pi, 360 * random() - 180) }
        var entries: [PlaceIndexFixture.Entry] = []
        for number in 0..<3000 {
            // Half of them crowded into Europe, as real places are.
            let (latitude, longitude) =
                number % 2 == 0 ? anywhere() : (40 + 20 * random(), -10 + 40 * random())
            entries.append(.init("P\(number)", latitude, longitude, population: Int(random() * 1e6)))
        }
        let index = try PlaceIndex(copying: PlaceIndexFixture.bytes(entries), file: "random.vgeo")
        for number in 0..<600 {
            let point: (Double, Double)
            if number % 2 == 0 {
                point = anywhere()
            } else {
                let entry = entries[Int(generator.next() % UInt64(entries.count))]
                point = (max(-90, min(90, entry.latitude + 0.02 * random())), entry.longitude)
            }
            let coordinate = try Self.at(point.0, point.1)
            let tree = try #require(index.nearest(coordinate))
            let scan = try #require(index.nearestByScan(coordinate))
            #expect(abs(tree.kilometres - scan.kilometres) < 1e-9, "\(point)")
            let found = try index.describe(tree.index)
            let entry = try #require(entries.first { $0.name == found.name })
            let oracle = Self.haversine(point, (entry.latitude, entry.longitude))
            #expect(abs(tree.kilometres - oracle) < 0.001)
        }
    }

    @Test func populationsRoundTo4096ths() {
        for population in [0, 1, 4095, 4096, 4097, 29_640, 522_969, 3_547_809, 24_874_500, 134_000_000] {
            let code = PlaceIndexFixture.populationCode(population)
            let decoded = (code & 0xFFF) << (code >> 12)
            #expect(abs(decoded - population) <= max(population / 4096, 0), "\(population)")
        }
    }

    // MARK: Hostile files

    @Test func refusesFilesCutShortWithTheirName() throws {
        let bytes = PlaceIndexFixture.bytes(PlaceIndexFixture.world)
        for length in 0..<bytes.count {
            #expect(throws: PlaceIndexError.self, "\(length) bytes") {
                try PlaceIndex(copying: Array(bytes.prefix(length)), file: "cut.vgeo")
            }
        }
        let error = try #require(PlaceIndex.errorOpening(Array(bytes.prefix(bytes.count - 1))))
        #expect(error.description == "f.vgeo: truncated: \(bytes.count - 1) of its \(bytes.count) bytes")
        #expect(PlaceIndex.errorOpening([])?.message == "empty (not a place index)")
        #expect(PlaceIndex.errorOpening(Array("PNG and more".utf8))?.message == "not a place index (no VGEO header)")
        #expect(
            PlaceIndex.errorOpening(bytes + [0])?.message
                == "1 bytes after its declared end (\(bytes.count) bytes)")
    }

    @Test func refusesHeadersThatDoNotAddUp() {
        let bytes = PlaceIndexFixture.bytes(PlaceIndexFixture.world)
        func patched(_ offset: Int, _ value: [UInt8]) -> [UInt8] {
            var copy = bytes
            copy.replaceSubrange(offset..<(offset + value.count), with: value)
            return copy
        }
        #expect(PlaceIndex.errorOpening(patched(4, [2, 0]))?.message.hasPrefix("format version 2") == true)
        #expect(PlaceIndex.errorOpening(patched(6, [8, 0]))?.message == "header of 8 bytes, expected 64 or more")
        for field in stride(from: 12, through: 32, by: 4) {
            for value: [UInt8] in [[0xFF, 0xFF, 0xFF, 0xFF], [0, 0, 0, 0x80], [1, 0, 0, 0]] {
                #expect(PlaceIndex.errorOpening(patched(field, value)) != nil, "field at \(field)")
            }
        }
    }

    /// Records that point outside their sections: an error naming the file when a lookup reaches them.
    @Test func refusesRecordsThatPointOutside() throws {
        let entries = [PlaceIndexFixture.Entry("Only", 10, 10)]
        let bytes = PlaceIndexFixture.bytes(entries)
        func patched(_ offset: Int, _ value: [UInt8]) throws -> PlaceIndex {
            var copy = bytes
            copy.replaceSubrange(offset..<(offset + value.count), with: value)
            return try PlaceIndex(copying: copy, file: "bad.vgeo")
        }
        let here = try Self.at(10, 10)
        let farName = try patched(64 + 8, [0xFF, 0xFF, 0, 0])
        #expect(throws: PlaceIndexError.self) { try farName.lookup(here) }
        #expect(throws: PlaceIndexError.self) { try farName.validate() }
        let farRegion = try patched(64 + 12, [9, 0])
        let error = try #require(farRegion.errorLooking(up: here))
        #expect(error.description == "bad.vgeo: place 0 names region 9, but there are 1")
        let farCountry = try patched(64 + 16 + 4, [3, 0])
        #expect(farCountry.errorLooking(up: here)?.message == "region 0 names country 3, but there are 1")
        // The last name claims more bytes than the names have.
        let namesStart = 64 + 16 + 8 + 8
        let longName = try patched(namesStart, [200])
        #expect(longName.errorLooking(up: here)?.message.contains("runs past the end of the names") == true)
        let offGlobe = try patched(64, PlaceIndexFixture.le32(95_000_000))
        #expect(throws: PlaceIndexError.self) { try offGlobe.validate() }
    }

    /// Every byte of a small index set to a few values: opening, validating and looking up answer or refuse, and
    /// never trap or read outside the file (the address sanitizer run of the tests would see it).
    @Test func anyCorruptionIsAnErrorOrAnAnswer() throws {
        let bytes = PlaceIndexFixture.bytes(Array(PlaceIndexFixture.world.prefix(6)))
        let points = try [Self.at(45.764, 4.8357), Self.at(-16.79, -179.995), Self.at(0, 10), Self.at(-90, 0)]
        for offset in 0..<bytes.count {
            for value: UInt8 in [0x00, 0x7F, 0xFF] {
                var copy = bytes
                copy[offset] = value
                guard let index = try? PlaceIndex(copying: copy, file: "c.vgeo") else { continue }
                _ = try? index.validate()
                for point in points { _ = try? index.lookup(point) }
            }
        }
    }

    // MARK: The index that ships

    /// `data/places.vgeo` as committed: it opens, every record reads, and the places of the test photos come out
    /// as GeoNames has them, each lookup well under a millisecond.
    @Test func theShippedIndexNamesTheTestPhotosPlaces() throws {
        let index = try PlaceIndex.load(path: "\(repositoryRoot)/data/places.vgeo")
        try index.validate()
        #expect(index.placeCount > 150_000)
        #expect(index.attribution.contains("GeoNames") && index.attribution.contains("CC BY 4.0"))
        let photos: [(Double, Double, String)] = [
            (56.15600, 10.20820, "Århus, Denmark"), (59.30621, 18.03894, "Stockholm, Sweden"),
            (40.44697, -3.72475, "Madrid, Spain"), (51.02500, 7.59194, "Gummersbach, Germany"),
            (46.75470, 33.33611, "Nova Kakhovka, Ukraine"), (44.85048, 34.97665, "Sudak, Ukraine"),
            (45.764, 4.8357, "Lyon, France"), (78.2232, 15.6267, "Longyearbyen, Svalbard and Jan Mayen"),
            (-16.8, 179.99, "Northern, Fiji"), (-16.8, -179.99, "Northern, Fiji"),
        ]
        for (latitude, longitude, expected) in photos {
            #expect(try index.lookup(Self.at(latitude, longitude))?.caption == expected, "\(latitude), \(longitude)")
        }
        #expect(try index.lookup(Self.at(30, -40)) == nil)
        var times: [Double] = []
        for (latitude, longitude, _) in photos {
            let point = try Self.at(latitude, longitude)
            let start = MonotonicClock.seconds()
            _ = try index.lookup(point)
            times.append(MonotonicClock.seconds() - start)
        }
        #expect(times.sorted()[times.count / 2] < 0.001)
    }
}

extension PlaceIndex {
    static func errorOpening(_ bytes: [UInt8]) -> PlaceIndexError? {
        do {
            _ = try PlaceIndex(copying: bytes, file: "f.vgeo")
            return nil
        } catch {
            return error
        }
    }

    func errorLooking(up point: GeoCoordinate) -> PlaceIndexError? {
        do {
            _ = try lookup(point)
            return nil
        } catch {
            return error
        }
    }
}
