import Testing

@testable import VitrineLinks

/// Which `/dev/cecN` the player takes: a Pi 4 has two HDMI ports, each with its own adapter.
struct CECAdapterChoiceTests {
    static let pi4 = [
        CECAdapter.Info(path: "/dev/cec0", name: "vc4-hdmi-0", physicalAddress: 0x1000, drm: (card: 1, connector: 32)),
        CECAdapter.Info(path: "/dev/cec1", name: "vc4-hdmi-1", physicalAddress: 0xFFFF, drm: (card: 1, connector: 42)),
    ]

    @Test func theAdapterOnTheScreensConnectorWins() {
        let chosen = CECLink.choose(from: Self.pi4, configured: nil, screen: ("/dev/dri/card1", 42))
        #expect(chosen == .success("/dev/cec1"))
    }

    @Test func theSettingNamesItOutright() {
        #expect(
            CECLink.choose(from: Self.pi4, configured: "/dev/cec0", screen: ("/dev/dri/card1", 42))
                == .success("/dev/cec0"))
    }

    @Test func withoutConnectorInfoOnlyASingleAdapterIsTaken() {
        let unknown = Self.pi4.map { CECAdapter.Info(path: $0.path, name: $0.name, physicalAddress: 0x1000, drm: nil) }
        #expect(CECLink.choose(from: [unknown[0]], configured: nil, screen: nil) == .success("/dev/cec0"))
        guard
            case .failure(let problem) = CECLink.choose(from: unknown, configured: nil, screen: ("/dev/dri/card1", 42))
        else {
            Issue.record("two unknown adapters were guessed between")
            return
        }
        #expect(problem.reason.hasSuffix("none is known to be on the screen's port; set cec.adapter"))
        guard case .failure(let none) = CECLink.choose(from: [], configured: nil, screen: nil) else {
            Issue.record("no adapter was accepted")
            return
        }
        #expect(none.reason.hasPrefix("no adapter (/dev/cec*)"))
    }
}
