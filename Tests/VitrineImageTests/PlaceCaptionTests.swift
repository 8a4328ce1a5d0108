import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineImage

/// `{place}` in a caption, filled from the photo's GPS position and a place index written in the test when the
/// slide is rendered.
@Suite struct PlaceCaptionTests {
    let folder: TemporaryFolder
    let budget = MemoryBudget(limit: 256 << 20)

    init() throws {
        folder = try TemporaryFolder()
    }

    func places() throws -> PlaceIndex {
        let entries: [PlaceIndexFixture.Entry] = [
            .init(
                "Århus", 56.15674, 10.21076, population: 285_273, region: "Central Jutland", countryCode: "DK",
                country: "Denmark"),
            .init(
                "Odder", 55.97313, 10.15300, population: 11_000, region: "Central Jutland", countryCode: "DK",
                country: "Denmark"),
        ]
        return try PlaceIndex(copying: PlaceIndexFixture.bytes(entries), file: "dk.vgeo")
    }

    func photo(_ name: String, gps: [(Int, GPSFixture.Value)]?, date: String? = nil) throws -> Slide {
        let size = Size(width: 320, height: 200)
        var bytes = try JPEGFixture.encode(
            rgb: JPEGFixture.solid(RGBColor(red: 128, green: 128, blue: 128), size: size), size: size)
        if let gps {
            let tiff = GPSFixture.tiff(gps, dateTimeOriginal: date)
            bytes = JPEGFixture.inserting(GPSFixture.segment(tiff), into: bytes)
        } else if let date {
            bytes = JPEGFixture.inserting(JPEGFixture.exifSegment(orientation: 1, dateTimeOriginal: date), into: bytes)
        }
        let path = try folder.write("\(name).jpg", bytes)
        return Slide(id: SlideID(category: "", name: name), original: path, renditions: [])
    }

    func options(_ template: String, places: PlaceIndex?) throws -> RenderOptions {
        var options = RenderOptions(canvas: Size(width: 320, height: 200))
        options.caption = CaptionStyle(template: try CaptionTemplate(parsing: template), size: 0.1)
        options.places = places
        return options
    }

    @Test func thePlaceIsLookedUpAndDrawn() throws {
        let index = try places()
        let renderer = SlideRenderer(budget: budget)
        let slide = try photo("gps", gps: GPSFixture.aarhus)
        let rendered = try renderer.render(slide, options: options("{place}", places: index))
        #expect(rendered.captions == ["Århus, Denmark"])
        #expect(rendered.places.first??.region == "Central Jutland")
        #expect(try #require(rendered.places.first??.kilometres) < 0.5)
        // The caption is drawn: bright text where the same slide without one is a flat grey.
        let bare = try renderer.render(slide, options: options("none", places: index)).frame
        var changed = 0
        for y in 100..<200 {
            for x in 160..<320 where rendered.frame.pixel(x: x, y: y) != bare.pixel(x: x, y: y) { changed += 1 }
        }
        #expect(changed > 100)
        for y in 0..<100 {
            for x in 0..<160 { #expect(rendered.frame.pixel(x: x, y: y) == bare.pixel(x: x, y: y)) }
        }
    }

    @Test func withoutAPositionOrAnIndexThePlaceIsLeftOut() throws {
        let index = try places()
        let renderer = SlideRenderer(budget: budget)
        let noGPS = try photo("plain", gps: nil, date: "2021:07:04 18:30:00")
        let template = "{date} · {place}"
        #expect(try renderer.render(noGPS, options: options(template, places: index)).captions == ["4 July 2021"])
        #expect(try renderer.render(noGPS, options: options("{place}", places: index)).captions == [nil])
        let both = try photo("both", gps: GPSFixture.aarhus, date: "2021:07:04 18:30:00")
        #expect(
            try renderer.render(both, options: options(template, places: index)).captions
                == ["4 July 2021 · Århus, Denmark"])
        #expect(try renderer.render(both, options: options(template, places: nil)).captions == ["4 July 2021"])
        // 40 km out to sea from Århus: the region only; far out, nothing.
        let kattegat = GPSFixture.position(
            latitude: [(56, 1), (9, 1), (0, 1)], north: "N", longitude: [(10, 1), (50, 1), (0, 1)], east: "E")
        let sea = try photo("sea", gps: kattegat)
        #expect(
            try renderer.render(sea, options: options("{place}", places: index)).captions
                == ["Central Jutland, Denmark"])
        let north = GPSFixture.position(
            latitude: [(58, 1), (0, 1), (0, 1)], north: "N", longitude: [(10, 1), (0, 1), (0, 1)], east: "E")
        let far = try photo("far", gps: north)
        #expect(try renderer.render(far, options: options("{place}", places: index)).captions == [nil])
    }

    @Test func aBrokenIndexIsAWarningNotAFailedSlide() throws {
        var bytes = PlaceIndexFixture.bytes([.init("Århus", 56.15674, 10.21076)])
        bytes[64 + 8] = 0xFF
        bytes[64 + 9] = 0xFF
        let index = try PlaceIndex(copying: bytes, file: "broken.vgeo")
        let rendered = try SlideRenderer(budget: budget).render(
            try photo("gps", gps: GPSFixture.aarhus, date: "2021:07:04 18:30:00"),
            options: options("{date} · {place}", places: index))
        #expect(rendered.captions == ["4 July 2021"])
        #expect(rendered.warnings.contains { $0.hasPrefix("broken.vgeo: place 0's name") })
    }
}
