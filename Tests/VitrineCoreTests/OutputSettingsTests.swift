import Testing
import VitrineCore

/// `outputs` and `mirror`: several screens from one board, each with its show or one show on all.
@Suite struct OutputSettingsTests {
    static func refusal(_ text: String) -> String {
        do {
            _ = try Settings.parse(text, file: "v.json")
            return "accepted"
        } catch {
            return error.description
        }
    }

    @Test func eachOutputPlaysTheTopLevelShowWithWhatItSaysDifferently() throws {
        let settings = try Settings.parse(
            """
            {
              "library": "photos", "interval": 10, "transition": "fade",
              "overlay": {"clock": "HH:mm"},
              "screenSchedule": {"off": "22:00", "on": "07:00"},
              "outputs": [
                {"name": "menu", "connector": "HDMI-A-1", "categories": ["Menu", "Drinks"], "interval": 20,
                 "overlay": false},
                {"connector": "HDMI-A-2", "library": "/srv/promo", "rotation": 90, "mode": "1920x1080@60",
                 "screenSchedule": false, "fit": "cover"}
              ]
            }
            """, file: "v.json")
        #expect(settings.outputs.map(\.name) == ["menu", "HDMI-A-2"])
        let menu = settings.forOutput(settings.outputs[0])
        #expect(menu.display.connector == "HDMI-A-1")
        #expect(menu.library == "photos")
        #expect(menu.interval == 20)
        #expect(menu.transition == .fade)
        #expect(menu.overlay == nil)
        #expect(menu.screenSchedule != nil)
        #expect(settings.outputs[0].categories == ["Menu", "Drinks"])
        #expect(menu.outputs.isEmpty)
        let promo = settings.forOutput(settings.outputs[1])
        #expect(promo.display.connector == "HDMI-A-2")
        #expect(promo.display.mode == "1920x1080@60")
        #expect(promo.library == "/srv/promo")
        #expect(promo.rotation == .clockwise90)
        #expect(promo.interval == 10)
        #expect(promo.fit == .cover)
        #expect(promo.overlay?.clock != nil)
        #expect(promo.screenSchedule == nil)
        // Relative libraries are the config file's folder's, as at the top level.
        let resolved = try Settings.parse(
            #"{"outputs": [{"connector": "DSI-1", "library": "small"}]}"#, file: "v.json"
        ).resolvingPaths(relativeTo: "/etc/vitrine")
        #expect(resolved.outputs.first?.library == "/etc/vitrine/small")
    }

    @Test func aMirrorTakesScreensOnly() throws {
        let all = try Settings.parse(#"{"mirror": true}"#, file: "v.json")
        #expect(all.mirror && all.outputs.isEmpty)
        let two = try Settings.parse(
            #"{"mirror": true, "outputs": [{"connector": "HDMI-A-1"}, {"connector": "HDMI-A-2", "rotation": 180}]}"#,
            file: "v.json")
        #expect(two.outputs.map(\.connector) == ["HDMI-A-1", "HDMI-A-2"])
        #expect(
            Self.refusal(#"{"mirror": true, "outputs": [{"connector": "HDMI-A-1", "interval": 5}]}"#)
                == "v.json:1: outputs[0].interval: a mirror shows one show on every screen: \"interval\" belongs at "
                + "the top level")
    }

    @Test func mistakesAreNamedWithTheirLineAndField() {
        let cases: [(String, String)] = [
            (#"{"outputs": []}"#, "v.json:1: outputs: is empty (name one screen or more, or leave \"outputs\" out)"),
            (#"{"outputs": [{"name": "a"}]}"#, "v.json:1: outputs[0].connector: missing"),
            (
                "{\"outputs\": [\n{\"connector\": \"HDMI-A-1\"},\n{\"connector\": \"HDMI-A-1\"}]}",
                "v.json:3: outputs[1].connector: \"HDMI-A-1\" is another output's screen too (one show per screen)"
            ),
            (
                #"{"outputs": [{"connector": "HDMI-A-1", "name": "a"}, {"connector": "HDMI-A-2", "name": "a"}]}"#,
                "v.json:1: outputs[1].name: \"a\" names another output too; give each its own name"
            ),
            (
                #"{"outputs": [{"connector": "HDMI-A-1", "keyboard": true}, {"connector": "DSI-1", "keyboard": true}]}"#,
                "v.json:1: outputs[1].keyboard: another output takes the keyboard already (one may)"
            ),
            (
                #"{"outputs": [{"connector": "HDMI-A-1", "rotation": 45}]}"#,
                "v.json:1: outputs[0].rotation: 45 is not a turn (expected 0, 90, 180 or 270)"
            ),
            (
                #"{"outputs": [{"connector": "HDMI-A-1", "name": "front door"}]}"#,
                "v.json:1: outputs[0].name: \"front door\" cannot address an output (no spaces, \"/\", \"#\" or "
                    + "\"+\": it is an MQTT topic level)"
            ),
            (
                #"{"outputs": [{"connector": "HDMI-A-1", "categories": ["A"], "startCategory": "B"}]}"#,
                "v.json:1: outputs[0].startCategory: \"B\" is not among this output's categories"
            ),
            (
                #"{"outputs": [{"connector": "HDMI-A-1", "overlay": true}]}"#,
                "v.json:1: outputs[0].overlay: true says nothing here (expected false, or the section itself)"
            ),
            (
                #"{"display": {"connector": "HDMI-A-1"}, "outputs": [{"connector": "HDMI-A-2"}]}"#,
                "v.json:1: display.connector: the screens are named in \"outputs\" (one \"connector\" each); leave "
                    + "this one out"
            ),
        ]
        for (text, expected) in cases {
            #expect(Self.refusal(text) == expected, "\(text)")
        }
        // An unknown key is refused as at the top level.
        let unknown = Self.refusal(#"{"outputs": [{"connector": "HDMI-A-1", "volume": 3}]}"#)
        #expect(unknown.hasPrefix("v.json:1: outputs[0]") && unknown.contains("volume"), "\(unknown)")
    }

    @Test func withoutOutputsTheShowIsTodays() throws {
        let settings = try Settings.parse(#"{"display": {"connector": "HDMI-A-1"}}"#, file: "v.json")
        #expect(settings.outputs.isEmpty && !settings.mirror)
        #expect(settings.display.connector == "HDMI-A-1")
    }
}

@Suite struct TurnedProfileTests {
    @Test func aTurnKeepsTheScanoutAndTurnsTheCanvas() {
        let landscape = DeviceProfile(
            id: "p", name: "P", connectors: [], mode: Size(width: 1920, height: 1080), edidName: nil,
            compose: Size(width: 1920, height: 1080), rotation: .none, rendition: Size(width: 1920, height: 1080),
            fit: .contain, memoryBudgetMiB: 128, note: nil)
        let portrait = landscape.turned(.clockwise90)
        #expect(portrait.scanout == landscape.scanout)
        #expect(portrait.compose == Size(width: 1080, height: 1920))
        #expect(portrait.rendition == Size(width: 1080, height: 1920))
        #expect(portrait.turned(.upsideDown).compose == Size(width: 1920, height: 1080))
        #expect(portrait.turned(.clockwise270).rendition == Size(width: 1080, height: 1920))
    }
}
