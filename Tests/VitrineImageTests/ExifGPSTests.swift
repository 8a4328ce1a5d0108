import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineImage

/// The GPS position in EXIF (blocks built byte by byte in the test), in every format that carries EXIF.
@Suite struct ExifGPSTests {
    static func location(_ tiff: [UInt8]) -> GeoCoordinate? { ExifReader.read(tiff: tiff[...]).location }

    @Test(arguments: [false, true])
    func readsDecimalMinutesAsTheSonyWritesThem(bigEndian: Bool) throws {
        let tiff = GPSFixture.tiff(GPSFixture.aarhus, bigEndian: bigEndian, dateTimeOriginal: "2013:08:10 12:00:00")
        #expect(ExifReader.read(tiff: tiff[...]).dateTimeOriginal == "2013:08:10 12:00:00")
        let location = try #require(Self.location(tiff))
        #expect(abs(location.latitude - GPSFixture.aarhusLatitude) < 1e-12)
        #expect(abs(location.longitude - GPSFixture.aarhusLongitude) < 1e-12)
        // The orientation beside it is still read.
        #expect(ExifReader.read(tiff: GPSFixture.tiff(GPSFixture.aarhus)[...]).orientation == .up)
    }

    @Test(arguments: [false, true])
    func readsDegreesMinutesSecondsWithTheirHemispheres(bigEndian: Bool) throws {
        // The iPhone 6 photo of the shared set: Madrid, west of Greenwich.
        let madrid = GPSFixture.position(
            latitude: [(40, 1), (26, 1), (4909, 100)], north: "N", longitude: [(3, 1), (43, 1), (2910, 100)],
            east: "W")
        let west = try #require(Self.location(GPSFixture.tiff(madrid, bigEndian: bigEndian)))
        #expect(abs(west.latitude - (40 + 26.0 / 60 + 49.09 / 3600)) < 1e-12)
        #expect(abs(west.longitude + (3 + 43.0 / 60 + 29.1 / 3600)) < 1e-12)
        let sydney = GPSFixture.position(
            latitude: [(33, 1), (52, 1), (0, 1)], north: "S", longitude: [(151, 1), (12, 1), (30, 1)], east: "E")
        let south = try #require(Self.location(GPSFixture.tiff(sydney, bigEndian: bigEndian)))
        #expect(abs(south.latitude + (33 + 52.0 / 60)) < 1e-12 && abs(south.longitude - 151.2083333333) < 1e-9)
        // Degrees alone, as a decimal.
        let decimal = GPSFixture.position(
            latitude: [(4_575_000, 100_000)], north: "N", longitude: [(484_000, 100_000)], east: "E")
        #expect(Self.location(GPSFixture.tiff(decimal)) == GeoCoordinate(latitude: 45.75, longitude: 4.84))
    }

    @Test func incompleteOrImpossiblePositionsAreNoLocation() {
        let fields = GPSFixture.aarhus
        // The Canon SX60 of the shared set writes a GPS IFD with only GPSVersionID.
        #expect(Self.location(GPSFixture.tiff([])) == nil)
        #expect(Self.location(GPSFixture.tiff(Array(fields.prefix(3)))) == nil)
        #expect(Self.location(GPSFixture.tiff(Array(fields.dropFirst()))) == nil)
        var badReference = fields
        badReference[0] = (1, .ascii("X"))
        #expect(Self.location(GPSFixture.tiff(badReference)) == nil)
        var zeroDenominator = fields
        zeroDenominator[1] = (2, .rationals([(56, 1), (9, 0), (0, 1)]))
        #expect(Self.location(GPSFixture.tiff(zeroDenominator)) == nil)
        var beyondThePole = fields
        beyondThePole[1] = (2, .rationals([(91, 1), (0, 1), (0, 1)]))
        #expect(Self.location(GPSFixture.tiff(beyondThePole)) == nil)
        var signed = fields
        signed[1] = (2, .raw(type: 10, count: 3, bytes: [UInt8](repeating: 1, count: 24)))
        #expect(Self.location(GPSFixture.tiff(signed)) == nil)
        var farOffset = fields
        farOffset[3] = (4, .raw(type: 5, count: 3, bytes: [0xFF, 0xFF, 0xFF, 0x7F]))
        #expect(Self.location(GPSFixture.tiff(farOffset)) == nil)
    }

    @Test func malformedGPSBlocksNeverTrap() {
        let good = GPSFixture.tiff(GPSFixture.aarhus)
        for length in 0..<good.count {
            _ = ExifReader.read(tiff: good.prefix(length))
        }
        for index in 0..<good.count {
            for value: UInt8 in [0x00, 0xFF, 0x7F, 0x80] {
                var corrupt = good
                corrupt[index] = value
                _ = ExifReader.read(tiff: corrupt[...])
            }
        }
        #expect(ExifReader.read(tiff: good.prefix(good.count - 1)).location == nil)
    }

    /// JPEG APP1, PNG eXIf, WebP EXIF and HEIF's Exif item (with its four-byte offset) carry it to the header.
    @Test func everyFormatCarriesThePositionToItsHeader() throws {
        let size = Size(width: 16, height: 16)
        let tiff = GPSFixture.tiff(GPSFixture.aarhus)
        let jpeg = JPEGFixture.inserting(
            GPSFixture.segment(tiff), into: try JPEGFixture.encode(rgb: JPEGFixture.quadrants(size: size), size: size))
        let png = try ImageFixture.png(
            samples: [UInt8](repeating: 9, count: size.pixelCount * 3), size: size, color: .rgb, exif: tiff)
        let webp = ImageFixture.extendedWebP(
            try ImageFixture.webp(rgba: ImageFixture.quadrantsRGBA(size: size), size: size, lossless: true),
            size: size, alpha: false, exif: tiff)
        for (name, bytes) in [("jpeg", jpeg), ("png", png), ("webp", webp)] {
            let header = try ImageHeaderTests.header(bytes, name: name)
            #expect(header.location?.latitude == GPSFixture.aarhusLatitude, "\(name)")
            #expect(header.location?.longitude == GPSFixture.aarhusLongitude, "\(name)")
        }
        let heif = ExifReader.read(heifBlock: [0, 0, 0, 6] + Array("Exif".utf8) + [0, 0] + tiff)
        #expect(heif?.location?.latitude == GPSFixture.aarhusLatitude)
        let plain = try ImageHeaderTests.header(
            try JPEGFixture.encode(rgb: JPEGFixture.quadrants(size: size), size: size))
        #expect(plain.location == nil)
    }
}
