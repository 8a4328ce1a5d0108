import CCEC
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One `/dev/cecN`, non-blocking, in the player's loop (readable for messages, priority for events). It claims a
/// Playback Device address and passes everything the bus says up as events; `CECMachine` decides the answers.
public final class CECAdapter {
    enum Event: Equatable {
        case claimed(logical: UInt8, physical: UInt16)
        case unconfigured
        case received(CECMessage)
        case transmitted(CECMessage, acknowledged: Bool)
    }

    public struct Info: Equatable, Sendable {
        public var path: String
        public var name: String
        public var physicalAddress: UInt16
        /// The DRM card number and connector id the adapter sits on, when the kernel tells.
        public var drm: (card: UInt32, connector: UInt32)?

        public static func == (lhs: Info, rhs: Info) -> Bool {
            lhs.path == rhs.path && lhs.name == rhs.name && lhs.physicalAddress == rhs.physicalAddress
                && lhs.drm?.card == rhs.drm?.card && lhs.drm?.connector == rhs.drm?.connector
        }
    }

    let info: Info
    private var owned: Descriptor
    var descriptor: Int32 { owned.number }
    private var pending: [UInt32: CECMessage] = [:]
    private var configured = false

    /// The adapters there are, described (for `vitrine probe` and to choose one).
    public static func list() -> [Info] {
        guard let names = try? Folder.entryNames(in: "/dev") else { return [] }
        return names.filter { $0.count > 3 && $0.hasPrefix("cec") && $0.dropFirst(3).allSatisfy(\.isNumber) }
            .sorted(by: NaturalOrder.less).compactMap { try? describe("/dev/\($0)") }
    }

    static func describe(_ path: String) throws(CECError) -> Info {
        let owned = Descriptor(taking: vitrine_cec_open(path))
        guard owned.number >= 0 else { throw CECError(device: path, operation: "open it", errno: errno) }
        return try describe(owned.number, path: path)
    }

    private static func describe(_ descriptor: Int32, path: String) throws(CECError) -> Info {
        var caps = cec_caps()
        guard vitrine_cec_caps(descriptor, &caps) == 0 else {
            throw CECError(device: path, operation: "read its capabilities", errno: errno)
        }
        var physical: UInt16 = 0xFFFF
        // Unread, it stays 0xFFFF: no address yet (the TV is not connected), which the CEC machine waits out.
        _ = vitrine_cec_physical_address(descriptor, &physical)
        var card: UInt32 = 0
        var connector: UInt32 = 0
        let known = vitrine_cec_drm_connector(descriptor, &card, &connector) == 1
        let name = withUnsafeBytes(of: caps.name) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return Info(path: path, name: name, physicalAddress: physical, drm: known ? (card, connector) : nil)
    }

    /// The TV's power as it answers through `path` now (blocks up to a few seconds; for `vitrine probe`).
    public static func askTVPower(_ path: String, name: String = "Vitrine") -> String {
        var status: UInt8 = 0
        guard vitrine_cec_ask_tv_power(path, name, &status) == 0 else {
            switch errno {
            case ENONET: return "no address on the bus (is the HDMI cable in?)"
            case EISCONN: return "none: this adapter is the TV's own"
            case EIO, ETIMEDOUT: return "no answer (a TV without CEC, CEC off, or nothing plugged in)"
            default: return "not asked: \(String(cString: strerror(errno)))"
            }
        }
        return ["on", "standby", "turning on", "turning off"][Int(min(status, 3))]
    }

    /// Opens `path`, takes the bus and starts claiming a Playback Device address named `osdName`.
    init(path: String, osdName: String) throws(CECError) {
        // Thrown out of before the end, the descriptor closes with the half-made adapter.
        owned = Descriptor(taking: vitrine_cec_open(path))
        let descriptor = owned.number
        guard descriptor >= 0 else { throw CECError(device: path, operation: "open it", errno: errno) }
        info = try Self.describe(descriptor, path: path)
        guard vitrine_cec_take_bus(descriptor) == 0 else {
            throw CECError(device: path, operation: "take the bus as initiator and follower", errno: errno)
        }
        guard vitrine_cec_claim_playback(descriptor, osdName) == 0 else {
            throw CECError(device: path, operation: "claim a playback device address", errno: errno)
        }
    }

    /// Closing gives the logical address up (the kernel clears it with the last descriptor). A second call does
    /// nothing.
    func close() {
        owned = Descriptor(taking: -1)
    }

    /// Queues a message; false when the adapter refused it (no address yet, the cable out), which is logged by
    /// the caller at most once per cause.
    @discardableResult
    func transmit(_ message: CECMessage) -> Int32? {
        var sequence: UInt32 = 0
        let bytes = message.bytes
        guard vitrine_cec_transmit(descriptor, bytes, UInt32(bytes.count), &sequence) == 0 else { return errno }
        pending[sequence] = message
        return nil
    }

    /// Everything the adapter has: state changes first, then messages and transmit results.
    func service() -> [Event] {
        var events: [Event] = []
        var kind: UInt32 = 0
        var physical: UInt16 = 0
        var mask: UInt16 = 0
        while vitrine_cec_event(descriptor, &kind, &physical, &mask) == 0 {
            guard kind == VITRINE_CEC_EVENT_STATE_CHANGE else { continue }
            var logical: UInt8 = 255
            // Unread, it stays 255 (none claimed yet).
            _ = vitrine_cec_logical_address(descriptor, &logical)
            // The claim clears the old addresses first, which is a state change too: only a configured address
            // (or the Unregistered fallback) on a connected port counts.
            if physical != 0xFFFF && logical != 255 && (mask != 0 || logical == CECAddress.unregistered) {
                configured = true
                events.append(.claimed(logical: logical, physical: physical))
            } else if configured {
                configured = false
                pending = [:]
                events.append(.unconfigured)
            }
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        var length: UInt32 = 0
        var sequence: UInt32 = 0
        var status: UInt8 = 0
        for _ in 0..<64 {
            guard vitrine_cec_receive(descriptor, &bytes, &length, &sequence, &status) == 0 else { break }
            if sequence != 0, let sent = pending.removeValue(forKey: sequence) {
                events.append(.transmitted(sent, acknowledged: vitrine_cec_tx_ok(status) != 0))
            } else if sequence == 0, let message = CECMessage(bytes: Array(bytes.prefix(Int(length)))) {
                events.append(.received(message))
            }
        }
        return events
    }
}
