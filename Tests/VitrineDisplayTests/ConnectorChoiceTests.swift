import Testing
import VitrineCore

@testable import VitrineDisplay

@Suite struct ConnectorChoiceTests {
    static func connector(_ name: String, type: String, connected: Bool = true, modes: Int = 1) -> DRMConnector {
        DRMConnector(
            id: 1, name: name, type: type, connected: connected, modes: [], physicalSizeMillimetres: nil, edid: nil,
            panelOrientation: nil, dpmsProperty: nil, encoderID: 0, possibleCRTCs: 1
        ).withModeCount(modes)
    }

    @Test func anInternalPanelWinsOverHDMIUnlessOneIsNamed() {
        let hdmi = Self.connector("HDMI-A-1", type: "HDMI-A")
        let dsi = Self.connector("DSI-1", type: "DSI")
        #expect(DRMDevice.choose([hdmi, dsi], named: nil)?.name == "DSI-1")
        #expect(DRMDevice.choose([hdmi, dsi], named: "HDMI-A-1")?.name == "HDMI-A-1")
        #expect(DRMDevice.choose([hdmi, dsi], named: "HDMI-A-2") == nil)
    }

    @Test func disconnectedWritebackAndModelessConnectorsAreNeverChosen() {
        let writeback = Self.connector("Writeback-1", type: "Writeback")
        let unplugged = Self.connector("HDMI-A-1", type: "HDMI-A", connected: false)
        let modeless = Self.connector("DP-1", type: "DP", modes: 0)
        let hdmi = Self.connector("HDMI-A-2", type: "HDMI-A")
        #expect(DRMDevice.choose([writeback, unplugged, modeless, hdmi], named: nil)?.name == "HDMI-A-2")
        #expect(DRMDevice.choose([writeback, unplugged, modeless], named: nil) == nil)
    }

    @Test func theConnectorNameGivesItsTypeForTheDeviceTable() throws {
        let table = try DeviceTable.parse(
            """
            {"version": 1, "profiles": [{"id": "dsi", "name": "DSI panel", "match": {"connector": "DSI",
              "mode": "800x480"}, "compose": "800x480", "rendition": "800x480", "memoryBudgetMiB": 32}],
             "fallback": {}}
            """, file: "t.json")
        let panel = PanelDescription(connector: "DSI-1", mode: Size(width: 800, height: 480))
        #expect(table.profile(for: panel).id == "dsi")
        let other = PanelDescription(connector: "HDMI-A-1", mode: Size(width: 800, height: 480))
        #expect(table.profile(for: other).isDerived)
    }
}

extension DRMConnector {
    /// The same connector offering `count` 800x480 modes (a real mode line is only needed for a modeset).
    fileprivate func withModeCount(_ count: Int) -> DRMConnector {
        var copy = self
        copy.modes = (0..<count).map { _ in
            DRMMode(size: Size(width: 800, height: 480), refresh: 60, preferred: true, raw: .init())
        }
        return copy
    }
}
