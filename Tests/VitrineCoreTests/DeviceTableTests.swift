import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@Suite struct DeviceTableTests {
    let table: DeviceTable

    init() throws {
        table = try DeviceTable.load(path: "\(repositoryRoot)/Config/devices.json")
    }

    @Test func theShippedTableHasTwelveOrMoreDistinctPanels() {
        #expect(table.profiles.count >= 12)
        #expect(Set(table.profiles.map(\.id)).count == table.profiles.count)
        for profile in table.profiles {
            #expect(
                profile.memoryBudgetMiB * 1_048_576 >= profile.minimumBudgetBytes, "\(profile.id) budget too small")
        }
    }

    @Test(arguments: [
        ("DSI-1", "800x480", "rpi-touch-display", "800x480", 0),
        ("DSI-1", "720x1280", "rpi-touch-display-2", "1280x720", 90),
        ("DPI-1", "480x800", "pimoroni-hyperpixel4", "800x480", 270),
        ("HDMI-A-1", "1024x600", "waveshare-7in-hdmi-lcd-c", "1024x600", 0),
        ("HDMI-A-2", "1280x800", "waveshare-10in1-hdmi-lcd", "1280x800", 0),
        ("HDMI-A-1", "1920x1080", "hdmi-1080p", "1920x1080", 0),
        ("eDP-1", "1920x1080", "edp-laptop-1080p", "1920x1080", 0),
        ("HDMI-A-1", "1080x1920", "portrait-signage-1080x1920", "1080x1920", 0),
        ("HDMI-A-1", "3840x2160", "uhd-4k-tv", "1920x1080", 0),
    ])
    func matchesRealPanels(connector: String, mode: String, id: String, compose: String, rotation: Int) throws {
        let size = try #require(Size(parsing: mode))
        let profile = table.profile(for: PanelDescription(connector: connector, mode: size))
        #expect(profile.id == id)
        #expect(profile.compose.description == compose)
        #expect(profile.rotation.rawValue == rotation)
        #expect(!profile.isDerived)
    }

    @Test func fourKComposesBelowNativeAndSaysSo() throws {
        let profile = table.profile(
            for: PanelDescription(connector: "HDMI-A", mode: try #require(Size(parsing: "3840x2160"))))
        #expect(profile.composesBelowNative)
        #expect(profile.note?.contains("1920x1080") == true)
    }

    @Test func unknownPanelsGetADerivedProfile() throws {
        let odd = table.profile(
            for: PanelDescription(connector: "HDMI-A-1", mode: try #require(Size(parsing: "1600x900"))))
        #expect(odd.isDerived)
        #expect(odd.compose == Size(width: 1600, height: 900))
        #expect(odd.memoryBudgetMiB * 1_048_576 >= odd.minimumBudgetBytes)
        let huge = table.profile(for: PanelDescription(mode: try #require(Size(parsing: "5120x2880"))))
        #expect(huge.isDerived)
        #expect(huge.compose == Size(width: 1280, height: 720))
        #expect(huge.note?.contains("scales it up") == true)
    }

    /// An unknown 1024x600 panel: the rule gives 24 MiB plus six 2.3 MiB frames (42 MiB), where an 11 MP
    /// progressive photo needs 41 MiB for its decode alone. With the board's memory known the budget grows to an
    /// eighth of it, at most 256 MiB; a share of 0 keeps the rule.
    @Test func anUnknownPanelsBudgetGrowsWithTheBoardsMemory() throws {
        let panel = PanelDescription(mode: Size(width: 1024, height: 600))
        let second =
            #"{"id": "fhd", "name": "FHD", "match": {"mode": "1920x1080"}, "compose": "1920x1080", "#
            + #""rendition": "1920x1080", "memoryBudgetMiB": 64}"#
        var table = try DeviceTable.parse(Self.profileTable(second), file: "t.json")
        #expect(table.profile(for: panel).memoryBudgetMiB == 42)
        table.boardMemoryMiB = 256
        #expect(table.profile(for: panel).memoryBudgetMiB == 42)
        table.boardMemoryMiB = 512
        #expect(table.profile(for: panel).memoryBudgetMiB == 64)
        table.boardMemoryMiB = 8192
        #expect(table.profile(for: panel).memoryBudgetMiB == 256)
        var fixed = try DeviceTable.parse(
            Self.profileTable(second, extra: #""boardMemoryShare": 0, "maxMemoryMiB": 512"#), file: "t.json")
        fixed.boardMemoryMiB = 8192
        #expect(fixed.profile(for: panel).memoryBudgetMiB == 42)
        var capped = try DeviceTable.parse(
            Self.profileTable(second, extra: #""boardMemoryShare": 0.5, "maxMemoryMiB": 100"#), file: "t.json")
        capped.boardMemoryMiB = 1024
        #expect(capped.profile(for: panel).memoryBudgetMiB == 100)
        // A known panel keeps its own budget.
        #expect(capped.profile(for: PanelDescription(mode: Size(width: 800, height: 480))).memoryBudgetMiB == 32)
    }

    static let twoProfiles = """
        {
          "version": 1,
          "profiles": [
            {"id": "generic", "name": "Any 1080p", "match": {"mode": "1920x1080"}, "compose": "1920x1080",
             "rendition": "1920x1080", "memoryBudgetMiB": 64},
            {"id": "named", "name": "One monitor", "match": {"mode": "1920x1080", "edidName": "ACME 24"},
             "compose": "1080x1920", "rotation": 90, "rendition": "1080x1920", "memoryBudgetMiB": 64}
          ],
          "fallback": {}
        }
        """

    @Test func anEDIDNameMatchBeatsAModeMatch() throws {
        let table = try DeviceTable.parse(Self.twoProfiles, file: "t.json")
        let mode = try #require(Size(parsing: "1920x1080"))
        #expect(table.profile(for: PanelDescription(mode: mode, edidName: "acme 24")).id == "named")
        #expect(table.profile(for: PanelDescription(mode: mode, edidName: "Other")).id == "generic")
        #expect(table.profile(for: PanelDescription(mode: mode)).id == "generic")
    }

    static func profileTable(_ profile: String, extra: String = "") -> String {
        """
        {
          "version": 1,
          "profiles": [
            {"id": "first", "name": "First", "match": {"mode": "800x480"}, "compose": "800x480",
             "rendition": "800x480", "memoryBudgetMiB": 32},
            \(profile)
          ],
          "fallback": {\(extra)}
        }
        """
    }

    @Test(arguments: [
        (
            #"{"id": "x", "name": "X", "match": {"mode": "800x480"}, "compose": "800x480", "rendition": "800x480", "memoryBudgetMiB": 32, "colour": 1}"#,
            "profiles[1] (id \"x\").colour", "unknown key"
        ),
        (
            #"{"id": "x", "name": "X", "match": {"mode": "800x480"}, "compose": "800x480", "rendition": "800x480", "memoryBudgetMiB": "32"}"#,
            "profiles[1] (id \"x\").memoryBudgetMiB", "expected an integer, found a string"
        ),
        (
            #"{"id": "x", "name": "X", "match": {"mode": "0x480"}, "compose": "800x480", "rendition": "800x480", "memoryBudgetMiB": 32}"#,
            "profiles[1] (id \"x\").match.mode", "is not a size"
        ),
        (
            #"{"id": "first", "name": "X", "match": {"mode": "800x480"}, "compose": "800x480", "rendition": "800x480", "memoryBudgetMiB": 32}"#,
            "profiles[1] (id \"first\").id", "duplicate id, already used by profiles[0]"
        ),
        (
            #"{"id": "x", "name": "X", "match": {"mode": "1920x1080"}, "compose": "1920x1080", "rendition": "800x480", "memoryBudgetMiB": 8}"#,
            "profiles[1] (id \"x\").memoryBudgetMiB", "below the 24 MiB"
        ),
        (
            #"{"id": "x", "name": "X", "match": {"mode": "720x1280"}, "compose": "1280x720", "rendition": "800x480", "memoryBudgetMiB": 32}"#,
            "profiles[1] (id \"x\").compose", "needs rotation 90 or 270"
        ),
        (
            #"{"id": "x", "name": "X", "match": {"mode": "800x480", "connector": "HDMI"}, "compose": "800x480", "rendition": "800x480", "memoryBudgetMiB": 32}"#,
            "profiles[1] (id \"x\").match.connector", "unknown connector type \"HDMI\""
        ),
        (
            #"{"id": "x", "name": "X", "match": {"mode": "800x480"}, "compose": "800x480", "rotation": 45, "rendition": "800x480", "memoryBudgetMiB": 32}"#,
            "profiles[1] (id \"x\").rotation", "not allowed"
        ),
        (
            #"{"id": "Bad Id", "name": "X", "match": {"mode": "800x480"}, "compose": "800x480", "rendition": "800x480", "memoryBudgetMiB": 32}"#,
            "profiles[1].id", "not a valid id"
        ),
    ])
    func refusesABadProfileNamingItsIndexIdAndKey(profile: String, path: String, message: String) {
        let text = Self.profileTable(profile)
        #expect {
            _ = try DeviceTable.parse(text, file: "devices.json")
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.file == "devices.json" && error.line == 6 && error.path == path
                && error.message.contains(message) && error.description.hasPrefix("devices.json:6: ")
        }
    }

    @Test func refusesAnUnknownFallbackKeyWithItsLine() {
        let text = Self.profileTable(
            #"{"id": "x", "name": "X", "match": {"mode": "800x480"}, "compose": "800x480", "rendition": "800x480", "memoryBudgetMiB": 32}"#,
            extra: "\"frames\": 3")
        #expect {
            _ = try DeviceTable.parse(text, file: "devices.json")
        } throws: { error in
            (error as? ConfigError)?.path == "fallback.frames" && (error as? ConfigError)?.line == 8
        }
    }

    /// The table compiled into the binary is the shipped Config/devices.json, byte for byte (make builtin-devices
    /// writes it), and loads as a table.
    @Test func theBuiltInTableIsTheShippedOne() throws {
        let shipped = try FileBytes.readText("\(repositoryRoot)/Config/devices.json")
        #expect(BuiltInDeviceTable.json + "\n" == shipped, "run make builtin-devices")
        let table = try DeviceTable.parse(BuiltInDeviceTable.json, file: BuiltInDeviceTable.name)
        #expect(
            table.profiles.count == (try DeviceTable.load(path: "\(repositoryRoot)/Config/devices.json")).profiles.count
        )
    }
}
