import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineCLI

/// One show on three screens (`mirror`), on headless stand-ins: two at the first screen's size and one at another.
/// Every screen shows the same slides at the same moments, each picture at its own screen's size; a command
/// addressed to any of the screens moves the one show. The real kernel's side is `make vm-screens`.
@Suite(.serialized) struct MirrorEndToEndTests {
    let folder: TemporaryFolder
    let tests: PlayEndToEndTests
    static let colors: [String: RGBColor] = [
        "1": JPEGFixture.red, "2": JPEGFixture.green, "3": JPEGFixture.blue, "4": JPEGFixture.yellow,
    ]

    init() throws {
        tests = try PlayEndToEndTests()
        folder = tests.folder
        for (name, color) in Self.colors { try tests.photo("Shop/\(name).jpg", color, Size(width: 320, height: 192)) }
        try folder.write(
            "mirror.json",
            text: """
                {"library": "library", "deviceTable": "\(repositoryRoot)/Config/devices.json", "interval": 1,
                 "transition": "none", "display": {"backend": "headless", "headlessSize": "160x96"},
                 "controlSocket": "control.sock", "mirror": true, "startCategory": "Shop",
                 "outputs": [
                   {"name": "door", "connector": "HDMI-A-1", "mode": "160x96"},
                   {"name": "till", "connector": "HDMI-A-2", "mode": "160x96"},
                   {"name": "window", "connector": "DSI-1", "mode": "128x128"}
                 ]}
                """)
    }

    /// The records presented on one screen, with their times.
    func presented(on output: String) -> [(slide: String, t: Double)] {
        guard let text = try? FileBytes.readText("\(tests.snapshots)/\(output)/presented.jsonl") else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let value = try? JSONParser.parse(String(line)), case .object(let members) = value.kind,
                case .string(let slide)? = members.first(where: { $0.key == "slide" })?.value.kind,
                case .number(let t)? = members.first(where: { $0.key == "t" })?.value.kind
            else { return nil }
            return (slide, t)
        }
    }

    /// The colour at the centre of one screen's snapshot `sequence`, and the snapshot's size.
    func centre(of output: String, sequence: Int) throws -> (size: String, color: RGBColor) {
        let name = String(sequence)
        let bytes = try FileBytes.read(
            "\(tests.snapshots)/\(output)/\(String(repeating: "0", count: 6 - name.count))\(name).ppm")
        let text = String(decoding: bytes.prefix(20), as: UTF8.self).split(separator: "\n")
        let size = text.count > 1 ? String(text[1]) : ""
        let parts = size.split(separator: " ").compactMap { Int($0) }
        let header = "P6\n\(size)\n255\n".utf8.count
        guard parts.count == 2 else { return (size, .black) }
        let offset = header + ((parts[1] / 2) * parts[0] + parts[0] / 2) * 3
        guard offset + 2 < bytes.count else { return (size, .black) }
        return (size, RGBColor(red: bytes[offset], green: bytes[offset + 1], blue: bytes[offset + 2]))
    }

    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func everyScreenShowsTheSameSlideAtTheSameMomentAtItsOwnSize() throws {
        let player = try PlayEndToEndTests.Running(
            arguments: ["play", "--config", "\(folder.path)/mirror.json", "--snapshots", tests.snapshots],
            log: "\(folder.path)/play.log")
        defer { _ = player.stop() }
        let screens = ["door", "till", "window"]
        guard
            tests.eventually(
                "four slides on every screen", within: 30, { screens.allSatisfy { presented(on: $0).count >= 4 } })
        else { return }
        let door = presented(on: "door")
        for screen in ["till", "window"] {
            let other = presented(on: screen)
            #expect(other.prefix(4).map(\.slide) == door.prefix(4).map(\.slide), "\(screen): \(other)")
            // The same moment: each screen's picture within a quarter of a second of the show's (headless screens
            // flip at once; the window's picture is decoded ahead, like the show's).
            for (mine, theirs) in zip(door.prefix(4), other.prefix(4)) {
                #expect(abs(mine.t - theirs.t) < 0.25, "\(screen): \(theirs.slide) at \(theirs.t), door at \(mine.t)")
            }
        }
        // Each picture at its own screen's size, of the photo the show says.
        for (sequence, record) in door.prefix(4).enumerated() {
            let expected = try #require(Self.colors[String(record.slide.prefix { $0 != "." })], "\(record.slide)")
            for screen in screens {
                let (size, color) = try centre(of: screen, sequence: sequence + 1)
                #expect(size == (screen == "window" ? "128 128" : "160 96"), "\(screen) \(sequence + 1)")
                #expect(PlayEndToEndTests.near(color, expected), "\(screen) \(sequence + 1): \(color)")
            }
        }
        // Decoded once per distinct size: the first screen's size by the show, the window's by one worker.
        let log = try FileBytes.readText("\(folder.path)/play.log")
        let workers = log.split(separator: "\n").filter { $0.contains("are decoded on a worker of their own") }
        #expect(workers.count == 1, "\(log)")

        // One show: a pause through any screen's name holds every screen, and status lists them all.
        #expect(tests.ctl("@window pause") == "ok")
        let status = tests.ctl("status")
        #expect(status.contains("\"paused\":[\"user\"]"), "\(status)")
        #expect(status.contains("{\"name\":\"window\",\"mirrors\":\"door\""), "\(status)")
        #expect(status.contains("\"size\":\"128x128\""), "\(status)")
        let held = screens.map { presented(on: $0).count }
        #expect(tests.ctl("@till next") == "ok")
        guard
            tests.eventually(
                "one more slide on every screen",
                { zip(screens, held).allSatisfy { presented(on: $0.0).count == $0.1 + 1 } })
        else { return }
        let last = screens.map { presented(on: $0).last?.slide }
        #expect(Set(last).count == 1, "\(last)")
        #expect(tests.ctl("@lobby next").hasPrefix("error: no output named \"lobby\""))
    }
}
