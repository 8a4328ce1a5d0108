/// One HDMI-CEC message (CEC 1.4 section CEC 6): a header (initiator and destination logical addresses), an
/// opcode and up to 14 operand bytes. A message without an opcode is a poll.
public struct CECMessage: Equatable, Sendable, CustomStringConvertible {
    public var initiator: UInt8
    public var destination: UInt8
    public var opcode: UInt8?
    public var operands: [UInt8]

    public init(from initiator: UInt8, to destination: UInt8, _ opcode: UInt8?, _ operands: [UInt8] = []) {
        self.initiator = initiator
        self.destination = destination
        self.opcode = opcode
        self.operands = operands
    }

    /// The bytes on the bus: header block, opcode, operands.
    public var bytes: [UInt8] {
        [initiator << 4 | destination] + (opcode.map { [$0] + operands } ?? [])
    }

    /// A message as the kernel hands it over; nil for fewer than one byte or more than 16.
    public init?(bytes: [UInt8]) {
        guard let header = bytes.first, bytes.count <= 16 else { return nil }
        initiator = header >> 4
        destination = header & 0x0F
        opcode = bytes.count > 1 ? bytes[1] : nil
        operands = bytes.count > 2 ? Array(bytes[2...]) : []
    }

    public var isBroadcast: Bool { destination == CECAddress.broadcast }

    /// A physical address operand (a.b.c.d, two bytes) at `index`.
    public func physicalAddress(at index: Int) -> UInt16? {
        guard operands.count >= index + 2 else { return nil }
        return UInt16(operands[index]) << 8 | UInt16(operands[index + 1])
    }

    public var description: String {
        let name = opcode.map { CECOpcode.name($0) } ?? "poll"
        let hex = operands.map { String($0, radix: 16).leftPadded(to: 2) }.joined(separator: ":")
        return "\(initiator)->\(destination == 15 ? "all" : String(destination)) \(name)"
            + (hex.isEmpty ? "" : " \(hex)")
    }
}

/// Logical addresses (CEC 1.4 table 5).
public enum CECAddress {
    public static let tv: UInt8 = 0
    public static let unregistered: UInt8 = 15
    public static let broadcast: UInt8 = 15

    /// a.b.c.d, as `vitrine probe` and the log write it; f.f.f.f is "no address" (not connected).
    public static func physical(_ address: UInt16) -> String {
        guard address != 0xFFFF else { return "f.f.f.f (not connected)" }
        return [12, 8, 4, 0].map { String((address >> UInt16($0)) & 0xF, radix: 16) }.joined(separator: ".")
    }
}

/// The opcodes the player sends or answers (CEC 1.4 table 8 onwards).
public enum CECOpcode {
    public static let featureAbort: UInt8 = 0x00
    public static let imageViewOn: UInt8 = 0x04
    public static let textViewOn: UInt8 = 0x0D
    public static let standby: UInt8 = 0x36
    public static let userControlPressed: UInt8 = 0x44
    public static let userControlReleased: UInt8 = 0x45
    public static let giveOSDName: UInt8 = 0x46
    public static let setOSDName: UInt8 = 0x47
    public static let routingChange: UInt8 = 0x80
    public static let routingInformation: UInt8 = 0x81
    public static let activeSource: UInt8 = 0x82
    public static let givePhysicalAddress: UInt8 = 0x83
    public static let reportPhysicalAddress: UInt8 = 0x84
    public static let requestActiveSource: UInt8 = 0x85
    public static let setStreamPath: UInt8 = 0x86
    public static let deviceVendorID: UInt8 = 0x87
    public static let giveDeviceVendorID: UInt8 = 0x8C
    public static let menuRequest: UInt8 = 0x8D
    public static let menuStatus: UInt8 = 0x8E
    public static let giveDevicePowerStatus: UInt8 = 0x8F
    public static let reportPowerStatus: UInt8 = 0x90
    public static let inactiveSource: UInt8 = 0x9D
    public static let cecVersion: UInt8 = 0x9E
    public static let getCECVersion: UInt8 = 0x9F
    public static let abort: UInt8 = 0xFF

    static let names: [UInt8: String] = [
        featureAbort: "Feature Abort", imageViewOn: "Image View On", textViewOn: "Text View On", standby: "Standby",
        userControlPressed: "User Control Pressed", userControlReleased: "User Control Released",
        giveOSDName: "Give OSD Name", setOSDName: "Set OSD Name", routingChange: "Routing Change",
        routingInformation: "Routing Information", activeSource: "Active Source",
        givePhysicalAddress: "Give Physical Address", reportPhysicalAddress: "Report Physical Address",
        requestActiveSource: "Request Active Source", setStreamPath: "Set Stream Path",
        deviceVendorID: "Device Vendor ID", giveDeviceVendorID: "Give Device Vendor ID", menuRequest: "Menu Request",
        menuStatus: "Menu Status", giveDevicePowerStatus: "Give Device Power Status",
        reportPowerStatus: "Report Power Status", inactiveSource: "Inactive Source", cecVersion: "CEC Version",
        getCECVersion: "Get CEC Version", abort: "Abort",
    ]

    public static func name(_ opcode: UInt8) -> String {
        names[opcode] ?? "opcode 0x\(String(opcode, radix: 16).leftPadded(to: 2))"
    }
}
