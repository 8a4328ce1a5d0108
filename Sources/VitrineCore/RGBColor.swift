/// An opaque colour, written `RRGGBB` (an optional leading `#` is accepted).
public struct RGBColor: Hashable, Sendable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public static let black = RGBColor(red: 0, green: 0, blue: 0)

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    public init?(parsing text: some StringProtocol) {
        let hex = text.hasPrefix("#") ? text.dropFirst() : text[...]
        guard hex.count == 6, hex.allSatisfy(\.isHexDigit), let value = UInt32(hex, radix: 16) else { return nil }
        self.init(red: UInt8(value >> 16 & 0xFF), green: UInt8(value >> 8 & 0xFF), blue: UInt8(value & 0xFF))
    }

    /// The pixel as DRM's XRGB8888 stores it: a little-endian 32-bit word 0x00RRGGBB.
    public var xrgb: UInt32 { UInt32(red) << 16 | UInt32(green) << 8 | UInt32(blue) }

    public var description: String {
        let digits = Array("0123456789ABCDEF")
        return String([red, green, blue].flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}
