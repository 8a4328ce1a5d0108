import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineCLI

/// `{place}` on the command line: check-config says where the index is and its attribution, render fills and
/// reports the caption, bench times the lookups.
@Suite struct PlaceCommandsTests {
    let folder: TemporaryFolder
    let index: String

    init() throws {
        folder = try TemporaryFolder()
        index = try folder.write("places.vgeo", PlaceIndexFixture.bytes(PlaceIndexFixture.world))
    }

    func config(_ members: String) throws -> String {
        try folder.write(
            "frame.json", text: "{\"deviceTable\": \"\(repositoryRoot)/Config/devices.json\", \(members)}")
    }

    @Test func checkConfigSaysWhereTheIndexIsAndCreditsIt() throws {
        let file = try config("\"caption\": \"{date} · {place}\", \"placesFile\": \"places.vgeo\"")
        let result = RecordingConsole.run(["check-config", file])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("  caption           {date} · {place} (set)"), "\(result.output)")
        #expect(result.output.contains("  placesFile        \(index): 13 places, 7 regions, 7 countries (set)"))
        #expect(result.output.contains("    \(PlaceIndexFixture.attribution)\n"))
    }

    @Test func checkConfigRefusesAnIndexItCannotRead() throws {
        try folder.write("broken.vgeo", Array(PlaceIndexFixture.bytes(PlaceIndexFixture.world).prefix(500)))
        let file = try config("\"caption\": \"{place}\", \"placesFile\": \"broken.vgeo\"")
        let result = RecordingConsole.run(["check-config", file])
        #expect(result.status == 1)
        #expect(result.errors.contains("\(file): placesFile: \(folder.path)/broken.vgeo: truncated: 500 of its"))
        let none = RecordingConsole.run(["check-config", try config("\"caption\": \"{place}\", \"placesFile\": \"\"")])
        #expect(none.status == 0)
        #expect(none.output.contains("  placesFile        none: {place} stays empty (set)"))
        #expect(none.output.contains("  warning: caption uses {place}, but there is no place index: it stays empty"))
    }

    @Test func renderFillsThePlaceAndReportsItAsJSON() throws {
        let size = Size(width: 64, height: 48)
        let photo = try folder.write(
            "lyon.jpg",
            JPEGFixture.inserting(
                GPSFixture.segment(
                    GPSFixture.tiff(
                        GPSFixture.position(
                            latitude: [(45_764_000, 1_000_000)], north: "N", longitude: [(4_835_700, 1_000_000)],
                            east: "E"))),
                into: try JPEGFixture.encode(rgb: JPEGFixture.quadrants(size: size), size: size)))
        let file = try config("\"placesFile\": \"places.vgeo\"")
        let result = RecordingConsole.run([
            "render", photo, "--config", file, "--caption", "{name} · {place}", "--panel", "64x48", "--output",
            "\(folder.path)/out.png", "--json",
        ])
        #expect(result.status == 0, "\(result.errors)")
        let json = try JSONParser.parse(result.output)
        guard case .object(let members) = json.kind, case .array(let frames)? = members.first?.value.kind,
            case .object(let frame)? = frames.first?.kind
        else {
            Issue.record("not the JSON expected: \(result.output)")
            return
        }
        guard case .array(let captions)? = frame.first(where: { $0.key == "captions" })?.value.kind,
            case .string(let caption)? = captions.first?.kind
        else {
            Issue.record("no captions: \(result.output)")
            return
        }
        #expect(caption == "lyon · Lyon, France")
        #expect(result.output.contains("\"kilometres\": 1.928"))
        let plain = RecordingConsole.run([
            "render", photo, "--config", file, "--caption", "{place}", "--panel", "64x48", "--output",
            "\(folder.path)/out.png",
        ])
        #expect(plain.output.hasSuffix(", caption \"Lyon, France\"\n"), "\(plain.output)")
    }

    @Test func renderRefusesABadTemplate() {
        let result = RecordingConsole.run(["render", "a.jpg", "--caption", "{where}", "--output", "x.png"])
        #expect(result.status == 2)
        #expect(
            result.errors.contains(
                "vitrine render: --caption {where}: unknown token {where} in \"{where}\" (expected {date}, {name}, "
                    + "{place} or {age})"))
    }

    @Test func benchTimesLookupsAgainstAScan() {
        let result = RecordingConsole.run(["bench", "--places", index, "--runs", "50", "--tsv"])
        #expect(result.status == 0, "\(result.errors)")
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.first?.hasPrefix("points\tlookups\tfound\tlookup_median_us") == true)
        #expect(lines.dropFirst().allSatisfy { $0.hasSuffix("\t0") })
    }
}
