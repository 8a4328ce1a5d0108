import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@Suite struct SettingsTests {
    @Test func theShippedConfigLoadsAndFindsTheSampleLibrary() throws {
        let settings = try Settings.load(path: "\(repositoryRoot)/Config/vitrine.json")
        #expect(settings.library == "\(repositoryRoot)/Config/sample-library")
        #expect(settings.deviceTable == "\(repositoryRoot)/Config/devices.json")
        #expect(settings.interval == 10)
        #expect(settings.keys.action(forKey: "Right") == .next)
        #expect(settings.keys.bindings[.quit]?.isEmpty == true)
    }

    @Test func everyKeyIsOptional() throws {
        let settings = try Settings.parse("{}", file: "v.json")
        #expect(settings == Settings())
    }

    @Test func readsEveryKey() throws {
        let settings = try Settings.parse(
            """
            {"library": "/srv/photos", "interval": 7.5, "order": "shuffle", "fit": "cover", "background": "#102030",
             "startCategory": "Family", "pauseOnInput": 12, "memoryBudgetMiB": 96, "maxMegapixels": 50,
             "display": {"backend": "drm", "device": "/dev/dri/card1", "connector": "HDMI-A-1", "mode": "1280x720@60"},
             "controlSocket": "/run/v.sock", "keys": {"quit": ["Q"], "next": "N"}, "fontPath": "/fonts/a.ttf",
             "transition": "fade", "transitionSeconds": 0.8, "pairPortraits": true, "caption": "date+name",
             "captionPosition": "top-left", "captionSize": 0.06, "locale": "fr"}
            """, file: "v.json")
        #expect(settings.library == "/srv/photos")
        #expect(settings.interval == 7.5)
        #expect(settings.order == .shuffle)
        #expect(settings.fit == .cover)
        #expect(settings.background == RGBColor(red: 0x10, green: 0x20, blue: 0x30))
        #expect(settings.startCategory == "Family")
        #expect(settings.memoryBudgetMiB == 96)
        #expect(settings.display.backend == .drm)
        #expect(settings.display.mode == "1280x720@60")
        #expect(settings.keys.action(forKey: "Q") == .quit)
        #expect(settings.keys.action(forKey: "N") == .next)
        #expect(settings.keys.action(forKey: "Right") == nil)
        #expect(settings.fontPath == "/fonts/a.ttf")
        #expect(settings.transition == .fade)
        #expect(settings.transitionSeconds == 0.8)
        #expect(settings.pairPortraits)
        #expect(settings.caption == CaptionStyle(template: .dateAndName, position: .topLeft, size: 0.06))
        #expect(settings.locale == .french)
    }

    @Test(arguments: [
        ("{\n  \"intervall\": 5\n}", 2, "intervall", "unknown key"),
        ("{\n  \"interval\": \"5\"\n}", 2, "interval", "expected a number, found a string"),
        ("{\n  \"interval\": 0.01\n}", 2, "interval", "out of range"),
        ("{\n  \"order\": \"random\"\n}", 2, "order", "expected one of: \"name\", \"shuffle\", \"newest\""),
        ("{\n\n  \"background\": \"black\"\n}", 3, "background", "not a colour"),
        ("{\"display\": {\n \"mode\": \"big\"}}", 2, "display.mode", "not a mode"),
        ("{\"display\": {\n \"conector\": \"HDMI-A-1\"}}", 2, "display.conector", "unknown key"),
        ("{\"keys\": {\n \"next\": [\"Rigth\"]}}", 2, "keys.next", "unknown key name \"Rigth\""),
        ("{\"keys\": {\n \"quit\": [\"Right\"]}}", 2, "keys.quit", "bound to both \"next\" and \"quit\""),
        ("{\"memoryBudgetMiB\": 2.5}", 1, "memoryBudgetMiB", "expected an integer"),
        ("[1]", 1, "", "expected an object, found an array"),
        ("{\"library\": 3}", 1, "library", "expected a string, found a number"),
        ("{\n\"transition\": \"wipe\"}", 2, "transition", "expected one of: \"none\", \"fade\""),
        ("{\"transitionSeconds\": 30}", 1, "transitionSeconds", "out of range"),
        ("{\"caption\": \"time\"}", 1, "caption", "\"date+name\""),
        ("{\"captionPosition\": \"middle\"}", 1, "captionPosition", "\"bottom-right\""),
        ("{\"locale\": \"klingon\"}", 1, "locale", "\"en-US\""),
        ("{\"pairPortraits\": \"yes\"}", 1, "pairPortraits", "expected"),
        ("{\"fit\": \"blur\"}", 1, "fit", "\"contain-blur\""),
        ("{\"video\": {\n\"audio\": \"hdmi\"}}", 2, "video.audio", "expected true or false"),
        ("{\"video\": {\"audioDevice\": \"\"}}", 1, "video.audioDevice", "ALSA device name"),
        ("{\"video\": {\"volume\": 3}}", 1, "video.volume", ""),
    ])
    func refusesBadSettingsWithLineAndKey(text: String, line: Int, path: String, message: String) {
        #expect {
            _ = try Settings.parse(text, file: "vitrine.json")
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.line == line && error.path == path && error.message.contains(message)
                && error.file == "vitrine.json"
        }
    }

    @Test func clipsAreSilentUnlessSoundIsAskedFor() throws {
        let quiet = try Settings.parse("{}", file: "v.json")
        #expect(quiet.video.audio == false)
        #expect(quiet.video.audioDevice == "default")
        let loud = try Settings.parse(
            "{\"video\": {\"audio\": true, \"audioDevice\": \"hdmi:CARD=vc4hdmi0,DEV=0\"}}", file: "v.json")
        #expect(loud.video.audio)
        #expect(loud.video.audioDevice == "hdmi:CARD=vc4hdmi0,DEV=0")
    }

    @Test func aMissingFileNamesThePath() {
        #expect {
            _ = try Settings.load(path: "/nonexistent/vitrine.json")
        } throws: { error in
            (error as? ConfigError)?.description == "/nonexistent/vitrine.json: cannot read: No such file or directory"
        }
    }

    @Test func invalidJSONSaysWhereItBroke() {
        #expect {
            _ = try Settings.parse("{\n\"interval\": 5,\n}", file: "vitrine.json")
        } throws: { error in
            (error as? ConfigError)?.description.hasPrefix("vitrine.json:3: invalid JSON") == true
        }
    }
}
