/// The star rating Lightroom, digiKam and darktable write into a photo's XMP packet (`xmp:Rating`, −1 for rejected,
/// 0 to 5 stars), as an attribute (`xmp:Rating="4"`) or an element (`<xmp:Rating>4</xmp:Rating>`). A plain scan of
/// the packet's bytes, not an XML parse: the packet comes from the photo, and nothing but the number is wanted.
public enum XMPRating {
    /// JPEG's APP1 segment for XMP starts with this namespace and a NUL.
    public static let jpegSignature = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0]

    /// Packets larger than this are not looked at (real ones are a few kilobytes; extended XMP holds no rating).
    public static let largestPacket = 1 << 20

    public static func rating(in packet: ArraySlice<UInt8>) -> Int? {
        guard packet.count <= largestPacket else { return nil }
        let name = Array("xmp:Rating".utf8)
        var position = packet.startIndex
        while let found = find(name, in: packet, from: position) {
            position = found + name.count
            var cursor = position
            func skipSpace() {
                while cursor < packet.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(packet[cursor]) { cursor += 1 }
            }
            skipSpace()
            guard cursor < packet.endIndex else { return nil }
            if packet[cursor] == UInt8(ascii: "=") {
                cursor += 1
                skipSpace()
                guard cursor < packet.endIndex,
                    packet[cursor] == UInt8(ascii: "\"") || packet[cursor] == UInt8(ascii: "'")
                else { continue }
                cursor += 1
            } else if packet[cursor] == UInt8(ascii: ">") {
                cursor += 1
                skipSpace()
            } else {
                continue
            }
            if let value = number(in: packet, at: cursor) { return value }
        }
        return nil
    }

    /// An integer (an optional minus, digits, an optional fraction ignored) from −1 to 5.
    private static func number(in bytes: ArraySlice<UInt8>, at start: Int) -> Int? {
        var cursor = start
        var negative = false
        if cursor < bytes.endIndex, bytes[cursor] == UInt8(ascii: "-") {
            negative = true
            cursor += 1
        }
        var value = 0
        var digits = 0
        while cursor < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[cursor]), digits < 3 {
            value = value * 10 + Int(bytes[cursor] - UInt8(ascii: "0"))
            digits += 1
            cursor += 1
        }
        guard digits > 0 else { return nil }
        let rating = negative ? -value : value
        return (-1...5).contains(rating) ? rating : nil
    }

    private static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>, from start: Int) -> Int? {
        guard let first = needle.first, haystack.endIndex - start >= needle.count else { return nil }
        var position = start
        while position + needle.count <= haystack.endIndex {
            guard let candidate = haystack[position...].firstIndex(of: first),
                candidate + needle.count <= haystack.endIndex
            else { return nil }
            if haystack[candidate..<candidate + needle.count].elementsEqual(needle) { return candidate }
            position = candidate + 1
        }
        return nil
    }
}
