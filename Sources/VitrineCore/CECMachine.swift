/// The player as an HDMI-CEC playback device, as a state machine: it turns the TV on and off with the screen, keeps
/// track of the TV's power and of who the TV shows, answers what a playback device must answer, and turns the TV
/// remote's keys into key names for the key map. The runtime carries out its actions on `/dev/cecN`.
public struct CECMachine: Sendable {
    public enum TVPower: String, Sendable {
        case unknown, on, standby
    }

    public enum Action: Equatable, Sendable {
        case transmit(CECMessage)
        case hold(PauseReason)
        case release(PauseReason)
        /// A key of the TV's remote, by the key map's name for it.
        case key(String)
        case arm(at: Double)
        case log(String)
    }

    /// The TV's power is asked this often: not every TV says when its owner switches it off.
    public static let pollInterval = 60.0
    /// A TV just asked to turn on may still say standby for a while (it is booting); such answers are not taken as
    /// its owner switching it off.
    public static let powerOnGrace = 15.0
    /// Playback device, CEC 1.4 (table 11 and the CEC Version operand).
    static let deviceType: UInt8 = 4
    static let version: UInt8 = 0x05

    public let settings: CECSettings
    public private(set) var logicalAddress: UInt8?
    public private(set) var physicalAddress: UInt16 = 0xFFFF
    public private(set) var tvPower = TVPower.unknown
    /// The player is what the TV shows (as far as the bus said).
    public private(set) var isActiveSource = false
    public private(set) var screenOn: Bool
    private var heldForTV = false
    private var heldForOtherSource = false
    /// Another device said it is what the TV shows, and nothing since said the player is.
    private var otherIsActive = false
    private var poweringOnUntil = -Double.infinity
    private var tvSilent = false

    public init(settings: CECSettings, screenOn: Bool) {
        self.settings = settings
        self.screenOn = screenOn
    }

    /// The adapter has its logical address: say who the player is, take the TV when the screen is on, ask the
    /// TV's power.
    public mutating func claimed(logical: UInt8, physical: UInt16, now: Double) -> [Action] {
        logicalAddress = logical
        physicalAddress = physical
        var actions: [Action] = [
            .log(
                "CEC: playback device \(logical) at \(CECAddress.physical(physical)) as \"\(settings.osdName)\""),
            .transmit(reportPhysicalAddress(from: logical)),
        ]
        if screenOn { actions += powerOn(now: now) }
        actions.append(.transmit(CECMessage(from: logical, to: CECAddress.tv, CECOpcode.giveDevicePowerStatus)))
        actions.append(.arm(at: now + Self.pollInterval))
        return actions
    }

    /// The adapter lost its addresses (the HDMI cable is out, or the TV dropped hotplug): nothing is known about
    /// the TV until they are back, and nothing the bus said holds the show meanwhile.
    public mutating func unconfigured() -> [Action] {
        guard logicalAddress != nil else { return [] }
        logicalAddress = nil
        physicalAddress = 0xFFFF
        tvPower = .unknown
        isActiveSource = false
        return [.log("CEC: no address on the bus (HDMI unplugged or the TV dropped hotplug)")] + releaseAll()
    }

    /// The player's screen went on or off (schedule, presence, `screen`, start): the TV follows when the settings
    /// say so. This is the only time the player turns the TV on, so a TV its owner switched off stays off until
    /// the next edge.
    public mutating func screen(on: Bool, now: Double) -> [Action] {
        screenOn = on
        var actions: [Action] = []
        if on {
            if heldForTV {
                heldForTV = false
                actions.append(.release(.tvOff))
            }
            actions += powerOn(now: now)
        } else {
            actions += releaseAll()
            // Only a TV showing the player (or one whose state nobody told) is put to standby: someone may be
            // watching another device on it.
            if let logical = logicalAddress, settings.standbyTV,
                isActiveSource || (!otherIsActive && tvPower == .unknown)
            {
                actions.append(.transmit(CECMessage(from: logical, to: CECAddress.tv, CECOpcode.standby)))
                actions.append(.log("CEC: the TV to standby"))
                isActiveSource = false
            }
        }
        return actions
    }

    public mutating func timerFired(now: Double) -> [Action] {
        guard let logical = logicalAddress else { return [] }
        return [
            .transmit(CECMessage(from: logical, to: CECAddress.tv, CECOpcode.giveDevicePowerStatus)),
            .arm(at: now + Self.pollInterval),
        ]
    }

    /// What became of a message the player sent: a directed one nobody acknowledged means the TV is not
    /// listening (off the bus, or no CEC).
    public mutating func transmitted(_ message: CECMessage, acknowledged: Bool) -> [Action] {
        guard message.destination == CECAddress.tv, !message.isBroadcast else { return [] }
        if acknowledged {
            tvSilent = false
            return []
        }
        guard !tvSilent else { return [] }
        tvSilent = true
        tvPower = .unknown
        return [.log("CEC: the TV does not acknowledge (\(message)); it may be unplugged or have CEC off")]
    }

    public mutating func received(_ message: CECMessage, now: Double) -> [Action] {
        guard let logical = logicalAddress, message.initiator != logical, let opcode = message.opcode else {
            return []
        }
        let toUs = message.destination == logical
        guard toUs || message.isBroadcast else { return [] }
        switch opcode {
        case CECOpcode.reportPowerStatus where message.initiator == CECAddress.tv:
            guard let status = message.operands.first else { return [] }
            // 0 on, 1 standby, 2 standby to on, 3 on to standby.
            return tvReported(on: status == 0 || status == 2, now: now)
        case CECOpcode.standby where message.initiator == CECAddress.tv:
            return tvReported(on: false, now: now)
        case CECOpcode.activeSource:
            guard let address = message.physicalAddress(at: 0), address != physicalAddress else { return [] }
            return otherSource(address, why: "active source")
        case CECOpcode.setStreamPath:
            guard let address = message.physicalAddress(at: 0) else { return [] }
            return address == physicalAddress ? becomeActive(from: logical) : otherSource(address, why: "stream path")
        case CECOpcode.routingChange:
            guard let address = message.physicalAddress(at: 2) else { return [] }
            return address == physicalAddress ? becomeActive(from: logical) : otherSource(address, why: "routing")
        case CECOpcode.requestActiveSource:
            return isActiveSource ? [.transmit(activeSourceMessage(from: logical))] : []
        case CECOpcode.userControlPressed where toUs:
            guard let code = message.operands.first else { return [] }
            guard let key = Self.remoteKeys[code] else {
                return [.log("CEC: remote key 0x\(String(code, radix: 16)) has no key name; ignored")]
            }
            return [.key(key)]
        case CECOpcode.userControlReleased:
            return []
        case CECOpcode.giveDevicePowerStatus where toUs:
            return [.transmit(reply(to: message, CECOpcode.reportPowerStatus, [screenOn ? 0 : 1]))]
        case CECOpcode.giveOSDName where toUs:
            return [.transmit(reply(to: message, CECOpcode.setOSDName, Array(settings.osdName.utf8.prefix(14))))]
        case CECOpcode.givePhysicalAddress where toUs:
            return [.transmit(reportPhysicalAddress(from: logical))]
        case CECOpcode.getCECVersion where toUs:
            return [.transmit(reply(to: message, CECOpcode.cecVersion, [Self.version]))]
        case CECOpcode.menuRequest where toUs:
            // No on-screen menu, but TVs forward their remote's keys only to a device whose menu is active.
            let deactivate = message.operands.first == 1
            return [.transmit(reply(to: message, CECOpcode.menuStatus, [deactivate ? 1 : 0]))]
        case CECOpcode.featureAbort:
            return []
        default:
            guard toUs else { return [] }
            // Directed messages the player does not support, Abort and Give Device Vendor ID (it has no IEEE OUI)
            // included: Feature Abort, "unrecognized opcode" (CEC 1.4 section 12.3).
            return [.transmit(reply(to: message, CECOpcode.featureAbort, [opcode, 0]))]
        }
    }

    /// CEC 1.4 UI command codes (table 27) to the key map's names.
    public static let remoteKeys: [UInt8: String] = {
        var keys: [UInt8: String] = [
            0x00: "OK", 0x01: "Up", 0x02: "Down", 0x03: "Left", 0x04: "Right", 0x09: "Menu", 0x0D: "Back",
            0x30: "ChannelUp", 0x31: "ChannelDown", 0x35: "Info", 0x44: "Play", 0x45: "Stop", 0x46: "Pause",
            0x48: "Rewind", 0x49: "FastForward", 0x4B: "NextSong", 0x4C: "PreviousSong", 0x60: "Play",
            0x61: "PlayPause", 0x71: "Blue", 0x72: "Red", 0x73: "Green", 0x74: "Yellow",
        ]
        for digit in 0...9 { keys[UInt8(0x20 + digit)] = String(digit) }
        return keys
    }()

    private mutating func powerOn(now: Double) -> [Action] {
        guard let logical = logicalAddress else { return [] }
        guard settings.powerOnTV else {
            // The TV is left alone: the show waits while it shows something else.
            guard otherIsActive, !heldForOtherSource else { return [] }
            heldForOtherSource = true
            return [.hold(.otherSource)]
        }
        poweringOnUntil = now + Self.powerOnGrace
        isActiveSource = true
        otherIsActive = false
        var actions: [Action] = [
            .transmit(CECMessage(from: logical, to: CECAddress.tv, CECOpcode.imageViewOn)),
            .transmit(activeSourceMessage(from: logical)),
            .log("CEC: the TV on, showing the player"),
        ]
        if heldForOtherSource {
            heldForOtherSource = false
            actions.append(.release(.otherSource))
        }
        return actions
    }

    private mutating func tvReported(on: Bool, now: Double) -> [Action] {
        tvSilent = false
        if on {
            tvPower = .on
            guard heldForTV else { return [] }
            heldForTV = false
            return [.release(.tvOff), .log("CEC: the TV is on again; the show goes on")]
        }
        tvPower = .standby
        guard screenOn, !heldForTV, now >= poweringOnUntil else { return [] }
        heldForTV = true
        isActiveSource = false
        return [
            .hold(.tvOff),
            .log(
                "CEC: the TV was switched off; the show holds until it is on again (the player turns it on at the "
                    + "next schedule or presence change)"),
        ]
    }

    private mutating func otherSource(_ address: UInt16, why: String) -> [Action] {
        isActiveSource = false
        otherIsActive = true
        guard screenOn, !heldForOtherSource else { return [] }
        heldForOtherSource = true
        return [
            .hold(.otherSource),
            .log(
                "CEC: the TV shows \(CECAddress.physical(address)) (\(why)); the show holds until it shows the player"),
        ]
    }

    private mutating func becomeActive(from logical: UInt8) -> [Action] {
        isActiveSource = true
        otherIsActive = false
        var actions: [Action] = [.transmit(activeSourceMessage(from: logical))]
        if heldForOtherSource {
            heldForOtherSource = false
            actions += [.release(.otherSource), .log("CEC: the TV shows the player again; the show goes on")]
        }
        return actions
    }

    private mutating func releaseAll() -> [Action] {
        var actions: [Action] = []
        if heldForTV { actions.append(.release(.tvOff)) }
        if heldForOtherSource { actions.append(.release(.otherSource)) }
        heldForTV = false
        heldForOtherSource = false
        return actions
    }

    private func activeSourceMessage(from logical: UInt8) -> CECMessage {
        CECMessage(
            from: logical, to: CECAddress.broadcast, CECOpcode.activeSource,
            [UInt8(physicalAddress >> 8), UInt8(physicalAddress & 0xFF)])
    }

    private func reportPhysicalAddress(from logical: UInt8) -> CECMessage {
        CECMessage(
            from: logical, to: CECAddress.broadcast, CECOpcode.reportPhysicalAddress,
            [UInt8(physicalAddress >> 8), UInt8(physicalAddress & 0xFF), Self.deviceType])
    }

    private func reply(to message: CECMessage, _ opcode: UInt8, _ operands: [UInt8]) -> CECMessage {
        CECMessage(from: message.destination, to: message.initiator, opcode, operands)
    }
}
