import Testing

@testable import VitrineCore

/// The player as a CEC playback device, with a manual clock: what the TV is sent, what holds the show, and what
/// the remote's keys become.
@Suite struct CECMachineTests {
    static let us: UInt8 = 4
    /// 1.0.0.0: the TV's first HDMI input.
    static let address: UInt16 = 0x1000

    static func sent(_ actions: [CECMachine.Action]) -> [String] {
        actions.compactMap { if case .transmit(let message) = $0 { message.description } else { nil } }
    }

    static func holds(_ actions: [CECMachine.Action]) -> [String] {
        actions.compactMap {
            switch $0 {
            case .hold(let reason): "hold \(reason.rawValue)"
            case .release(let reason): "release \(reason.rawValue)"
            default: nil
            }
        }
    }

    static func machine(screenOn: Bool = true, settings: CECSettings = CECSettings()) -> CECMachine {
        var machine = CECMachine(settings: settings, screenOn: screenOn)
        _ = machine.claimed(logical: us, physical: address, now: 0)
        return machine
    }

    static func fromTV(_ opcode: UInt8, _ operands: [UInt8] = [], to destination: UInt8 = us) -> CECMessage {
        CECMessage(from: CECAddress.tv, to: destination, opcode, operands)
    }

    @Test func atStartTheTVIsTurnedOnAndAskedItsPower() {
        var machine = CECMachine(settings: CECSettings(), screenOn: true)
        let actions = machine.claimed(logical: Self.us, physical: Self.address, now: 0)
        #expect(
            Self.sent(actions) == [
                "4->all Report Physical Address 10:00:04", "4->0 Image View On", "4->all Active Source 10:00",
                "4->0 Give Device Power Status",
            ])
        #expect(actions.last == .arm(at: CECMachine.pollInterval))
        #expect(machine.isActiveSource)
        // A dark start leaves the TV alone.
        var dark = CECMachine(settings: CECSettings(), screenOn: false)
        #expect(
            Self.sent(dark.claimed(logical: Self.us, physical: Self.address, now: 0)) == [
                "4->all Report Physical Address 10:00:04", "4->0 Give Device Power Status",
            ])
    }

    @Test func theTVFollowsTheScreenUnlessTheSettingsSayNo() {
        var machine = Self.machine()
        #expect(Self.sent(machine.screen(on: false, now: 100)) == ["4->0 Standby"])
        #expect(Self.sent(machine.screen(on: true, now: 200)) == ["4->0 Image View On", "4->all Active Source 10:00"])
        var settings = CECSettings()
        settings.powerOnTV = false
        settings.standbyTV = false
        var shared = Self.machine(settings: settings)
        #expect(Self.sent(shared.screen(on: false, now: 100)).isEmpty)
        #expect(Self.sent(shared.screen(on: true, now: 200)).isEmpty)
    }

    /// A TV its owner switched off holds the show, is not turned back on by a poll or anything else, and the
    /// next screen edge (schedule, presence) turns it on.
    @Test func aTVSwitchedOffByItsOwnerHoldsTheShowUntilTheNextEdge() {
        var machine = Self.machine()
        // Standby answers while the TV boots after Image View On are not the owner's doing.
        #expect(machine.received(Self.fromTV(CECOpcode.reportPowerStatus, [1]), now: 5).isEmpty)
        #expect(machine.received(Self.fromTV(CECOpcode.reportPowerStatus, [0]), now: 20).isEmpty)
        #expect(machine.tvPower == .on)
        let off = machine.received(Self.fromTV(CECOpcode.standby, to: CECAddress.broadcast), now: 300)
        #expect(Self.holds(off) == ["hold tvOff"])
        #expect(machine.tvPower == .standby)
        #expect(Self.sent(machine.timerFired(now: 360)) == ["4->0 Give Device Power Status"])
        #expect(machine.received(Self.fromTV(CECOpcode.reportPowerStatus, [1]), now: 361).isEmpty)
        // The owner turns it on again: the show goes on.
        #expect(
            Self.holds(machine.received(Self.fromTV(CECOpcode.reportPowerStatus, [0]), now: 400)) == ["release tvOff"])
        // Off again; the schedule turns the screen off and on: that edge turns the TV on and ends the hold.
        _ = machine.received(Self.fromTV(CECOpcode.reportPowerStatus, [1]), now: 500)
        let night = machine.screen(on: false, now: 600)
        #expect(Self.holds(night) == ["release tvOff"])
        #expect(Self.sent(night).isEmpty, "a TV already off and not showing the player is left alone")
        let morning = machine.screen(on: true, now: 900)
        #expect(Self.sent(morning) == ["4->0 Image View On", "4->all Active Source 10:00"])
    }

    @Test func anotherSourceHoldsTheShowUntilTheTVShowsThePlayerAgain() {
        var machine = Self.machine()
        let other = machine.received(
            CECMessage(from: 8, to: CECAddress.broadcast, CECOpcode.activeSource, [0x20, 0x00]), now: 10)
        #expect(Self.holds(other) == ["hold otherSource"])
        #expect(!machine.isActiveSource)
        // The player does not answer Request Active Source for the other device.
        #expect(
            machine.received(Self.fromTV(CECOpcode.requestActiveSource, to: CECAddress.broadcast), now: 11).isEmpty)
        // Standby on screen off is not sent: someone is watching the other device.
        #expect(Self.sent(machine.screen(on: false, now: 20)).isEmpty)
        _ = machine.screen(on: true, now: 30)
        _ = machine.received(
            CECMessage(from: 8, to: CECAddress.broadcast, CECOpcode.activeSource, [0x20, 0x00]), now: 40)
        let back = machine.received(
            Self.fromTV(CECOpcode.setStreamPath, [0x10, 0x00], to: CECAddress.broadcast), now: 50)
        #expect(Self.holds(back) == ["release otherSource"])
        #expect(Self.sent(back) == ["4->all Active Source 10:00"])
        #expect(
            Self.sent(machine.received(Self.fromTV(CECOpcode.requestActiveSource, to: CECAddress.broadcast), now: 60))
                == ["4->all Active Source 10:00"])
    }

    @Test func theRemotesKeysBecomeKeyNames() {
        var machine = Self.machine()
        #expect(machine.received(Self.fromTV(CECOpcode.userControlPressed, [0x04]), now: 1) == [.key("Right")])
        #expect(machine.received(Self.fromTV(CECOpcode.userControlPressed, [0x00]), now: 1) == [.key("OK")])
        #expect(machine.received(Self.fromTV(CECOpcode.userControlPressed, [0x23]), now: 1) == [.key("3")])
        #expect(machine.received(Self.fromTV(CECOpcode.userControlPressed, [0x30]), now: 1) == [.key("ChannelUp")])
        #expect(machine.received(Self.fromTV(CECOpcode.userControlPressed, [0x61]), now: 1) == [.key("PlayPause")])
        #expect(machine.received(Self.fromTV(CECOpcode.userControlReleased), now: 1).isEmpty)
        // Keys for another device are not the player's.
        #expect(machine.received(Self.fromTV(CECOpcode.userControlPressed, [0x04], to: 8), now: 1).isEmpty)
        for key in CECMachine.remoteKeys.values { #expect(KeyMap.knownKeys.contains(key), "\(key)") }
    }

    @Test func theMandatoryQuestionsAreAnswered() {
        var machine = Self.machine()
        func answer(_ opcode: UInt8, _ operands: [UInt8] = []) -> [String] {
            Self.sent(machine.received(Self.fromTV(opcode, operands), now: 1))
        }
        #expect(answer(CECOpcode.giveOSDName) == ["4->0 Set OSD Name 56:69:74:72:69:6e:65"])
        #expect(answer(CECOpcode.givePhysicalAddress) == ["4->all Report Physical Address 10:00:04"])
        #expect(answer(CECOpcode.getCECVersion) == ["4->0 CEC Version 05"])
        #expect(answer(CECOpcode.menuRequest, [2]) == ["4->0 Menu Status 00"])
        #expect(answer(CECOpcode.giveDevicePowerStatus) == ["4->0 Report Power Status 00"])
        #expect(answer(CECOpcode.giveDeviceVendorID) == ["4->0 Feature Abort 8c:00"])
        #expect(answer(CECOpcode.abort) == ["4->0 Feature Abort ff:00"])
        // Broadcasts and messages for others get no answer.
        #expect(Self.sent(machine.received(Self.fromTV(CECOpcode.giveOSDName, to: 8), now: 1)).isEmpty)
    }

    @Test func anUnpluggedCableForgetsTheBusAndItsHolds() {
        var machine = Self.machine()
        _ = machine.received(CECMessage(from: 8, to: 15, CECOpcode.activeSource, [0x20, 0x00]), now: 10)
        let gone = machine.unconfigured()
        #expect(Self.holds(gone) == ["release otherSource"])
        #expect(machine.logicalAddress == nil)
        #expect(machine.screen(on: false, now: 20).isEmpty)
        #expect(machine.timerFired(now: 60).isEmpty)
    }

    @Test func aTVThatDoesNotAcknowledgeIsOneLine() {
        var machine = Self.machine()
        let poll = CECMessage(from: Self.us, to: CECAddress.tv, CECOpcode.giveDevicePowerStatus)
        #expect(machine.transmitted(poll, acknowledged: false).count == 1)
        #expect(machine.transmitted(poll, acknowledged: false).isEmpty)
        #expect(machine.tvPower == .unknown)
        #expect(machine.transmitted(poll, acknowledged: true).isEmpty)
        #expect(machine.transmitted(poll, acknowledged: false).count == 1)
    }

    @Test func settingsAreCheckedWithTheField() throws {
        let settings = try Settings.parse(
            "{\"cec\": {\"osdName\": \"Hall frame\", \"standbyTV\": false}}", file: "f.json")
        #expect(settings.cec?.osdName == "Hall frame")
        #expect(settings.cec?.standbyTV == false && settings.cec?.powerOnTV == true)
        #expect(throws: ConfigError.self) {
            try Settings.parse("{\"cec\": {\"osdName\": \"A name far too long\"}}", file: "f.json")
        }
        #expect(throws: ConfigError.self) { try Settings.parse("{\"cec\": {\"adapter\": \"cec0\"}}", file: "f.json") }
    }
}
