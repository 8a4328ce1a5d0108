import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineCLI

/// Two screens' shows in one player (`outputs`), on headless stand-ins so the test needs no kernel: each plays only
/// its own categories at its own size, a command addressed to one output moves only that show, and one without an
/// output moves both. The real kernel's side (two CRTCs of one card, their flips, hotplug of one) is `make
/// vm-screens`.
@Suite(.serialized) struct TwoScreensEndToEndTests {
    let folder: TemporaryFolder
    let tests: PlayEndToEndTests

    init() throws {
        tests = try PlayEndToEndTests()
        folder = tests.folder
        try tests.photo("Menu/1.jpg", JPEGFixture.red, Size(width: 320, height: 192))
        try tests.photo("Menu/2.jpg", JPEGFixture.green, Size(width: 320, height: 192))
        try tests.photo("Offers/1.jpg", JPEGFixture.blue, Size(width: 320, height: 192))
        try tests.photo("Offers/2.jpg", JPEGFixture.yellow, Size(width: 320, height: 192))
        try writeConfig(offers: "")
    }

    /// The config: the menu screen and the offers screen, `offers` added to the offers output's entry.
    func writeConfig(offers: String) throws {
        try folder.write(
            "two.json",
            text: """
                {"library": "library", "deviceTable": "\(repositoryRoot)/Config/devices.json", "interval": 600,
                 "transition": "none", "display": {"backend": "headless", "headlessSize": "160x96"},
                 "controlSocket": "control.sock", "metricsFile": "metrics.prom", "metricsInterval": 1,
                 "outputs": [
                   {"name": "menu", "connector": "HDMI-A-1", "categories": ["Menu"], "mode": "160x96"},
                   {"name": "offers", "connector": "HDMI-A-2", "categories": "Offers", "mode": "128x128"\(offers)}
                 ]}
                """)
    }

    /// The records presented on one output's screen (its snapshots' folder).
    func presented(on output: String) -> [[String: String]] {
        guard let text = try? FileBytes.readText("\(tests.snapshots)/\(output)/presented.jsonl") else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let value = try? JSONParser.parse(String(line)), case .object(let members) = value.kind else {
                return nil
            }
            return members.reduce(into: [:]) { fields, member in
                if case .string(let text) = member.value.kind { fields[member.key] = text }
            }
        }
    }

    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func eachScreenPlaysItsOwnCategoriesAndCommandsFindTheirScreen() throws {
        let player = try PlayEndToEndTests.Running(
            arguments: ["play", "--config", "\(folder.path)/two.json", "--snapshots", tests.snapshots],
            log: "\(folder.path)/play.log")
        defer { _ = player.stop() }
        guard
            tests.eventually(
                "both screens' first slides",
                {
                    !presented(on: "menu").isEmpty && !presented(on: "offers").isEmpty
                })
        else { return }
        #expect(presented(on: "menu").first?["category"] == "Menu")
        #expect(presented(on: "offers").first?["category"] == "Offers")

        // Each screen at its own size, with its own photo.
        let status = tests.ctl("status")
        #expect(status.contains("\"outputs\":[{\"name\":\"menu\""), "\(status)")
        #expect(status.contains("\"size\":\"160x96\"") && status.contains("\"size\":\"128x128\""), "\(status)")
        #expect(tests.ctl("@offers status").contains("\"output\":\"offers\""))
        #expect(tests.ctl("@offers status").contains("\"category\":\"Offers\""))

        // Addressed: only that show moves.
        #expect(tests.ctl("@menu next") == "ok")
        #expect(tests.eventually("the menu's second slide", { presented(on: "menu").count == 2 }))
        #expect(presented(on: "menu").last?["slide"] == "2")
        // The loop answers in order: by this answer the menu's command has been carried out.
        #expect(tests.ctl("@offers status").contains("\"presented\":1,"))
        #expect(presented(on: "offers").count == 1)

        // Without an output: both move.
        #expect(tests.ctl("next") == "ok")
        #expect(
            tests.eventually(
                "both screens move",
                {
                    presented(on: "menu").count == 3 && presented(on: "offers").count == 2
                }))
        #expect(presented(on: "offers").last?["slide"] == "2")
        // The metrics count each screen's slides.
        #expect(
            tests.eventually(
                "each screen's slides in the metrics",
                {
                    let text = (try? FileBytes.readText("\(folder.path)/metrics.prom")) ?? ""
                    return text.contains("vitrine_output_slides_shown_total{output=\"menu\"} 3\n")
                        && text.contains("vitrine_output_slides_shown_total{output=\"offers\"} 2\n")
                }))

        // A category only one screen has goes to that one; one that no screen has, and an unknown output, are
        // refused with what there is.
        #expect(tests.ctl("category Menu") == "ok")
        #expect(tests.ctl("@offers category Menu").hasPrefix("error: no category named \"Menu\" (have: \"Offers\")"))
        #expect(tests.ctl("@lobby next") == "error: no output named \"lobby\" (have: \"menu\", \"offers\")")

        // A reload gives each show its output's settings again: a new interval for the offers screen alone.
        try writeConfig(offers: ", \"interval\": 900")
        #expect(tests.ctl("reload") == "ok")
        let counts = (presented(on: "menu").count, presented(on: "offers").count)
        #expect(tests.ctl("next") == "ok")
        #expect(
            tests.eventually(
                "both screens move again",
                {
                    presented(on: "menu").count == counts.0 + 1 && presented(on: "offers").count == counts.1 + 1
                }))
        let offers = tests.ctl("@offers status")
        let menu = tests.ctl("@menu status")
        #expect(offers.contains("\"seconds_left\":8") || offers.contains("\"seconds_left\":9"), "\(offers)")
        #expect(menu.contains("\"seconds_left\":5"), "\(menu)")
    }
}
