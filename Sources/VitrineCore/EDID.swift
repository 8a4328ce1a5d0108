/// The parts of a monitor's EDID (VESA E-EDID 1.3/1.4 base block) Vitrine matches panels by.
public struct EDID: Equatable, Sendable {
    /// The three-letter PNP manufacturer id, e.g. `DEL`.
    public var manufacturer: String
    public var productCode: Int
    public var serialNumber: UInt32
    /// The monitor name descriptor (tag 0xFC), e.g. `DELL P2419H`.
    public var monitorName: String?
    /// The serial string descriptor (tag 0xFF).
    public var serialText: String?
    /// The screen size in centimetres from bytes 21 and 22; nil when the EDID leaves it unset.
    public var sizeCentimetres: Size?

    /// Parses the 128-byte base block; nil when the header is not an EDID one. Extension blocks are ignored.
    public static func parse(_ bytes: [UInt8]) -> EDID? {
        let header: [UInt8] = [0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]
        guard bytes.count >= 128, bytes.prefix(8).elementsEqual(header) else { return nil }
        let packed = Int(bytes[8]) << 8 | Int(bytes[9])
        let letters = [packed >> 10 & 0x1F, packed >> 5 & 0x1F, packed & 0x1F].map { code -> Character in
            (1...26).contains(code) ? Character(UnicodeScalar(UInt8(64 + code))) : "?"
        }
        var edid = EDID(
            manufacturer: String(letters), productCode: Int(bytes[10]) | Int(bytes[11]) << 8,
            serialNumber: UInt32(bytes[12]) | UInt32(bytes[13]) << 8 | UInt32(bytes[14]) << 16 | UInt32(bytes[15])
                << 24,
            monitorName: nil, serialText: nil,
            sizeCentimetres: bytes[21] > 0 && bytes[22] > 0 ? Size(width: Int(bytes[21]), height: Int(bytes[22])) : nil)
        for start in stride(from: 54, to: 126, by: 18) {
            let descriptor = bytes[start..<start + 18]
            guard descriptor.prefix(3).allSatisfy({ $0 == 0 }) else { continue }
            let text = descriptor.dropFirst(5).prefix { $0 != 0x0A && $0 != 0 }
            let value = String(decoding: text.filter { (0x20..<0x7F).contains($0) }, as: UTF8.self)
                .trimmingWhitespace()
            switch descriptor[start + 3] {
            case 0xFC where !value.isEmpty: edid.monitorName = value
            case 0xFF where !value.isEmpty: edid.serialText = value
            default: break
            }
        }
        return edid
    }
}
