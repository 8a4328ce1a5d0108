import VitrineCore

/// Files that declare sizes at the limits of their formats, with every length and checksum right, so a parser
/// reaches the numbers instead of stopping at a bad CRC.
public enum HostileFiles {
    /// PNG's CRC-32 (ISO 3309, the one zlib computes), over a chunk's type and data.
    public static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    public static func bigEndian32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// One PNG chunk with its length and CRC.
    public static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian32(UInt32(data.count)) + typed + bigEndian32(crc32(typed))
    }

    /// A PNG whose IHDR declares `width` x `height` (up to 2^31 - 1 each), 8-bit RGBA, with a tiny IDAT (an empty
    /// zlib stream) and IEND: 65 bytes, every CRC valid.
    public static func png(width: UInt32, height: UInt32, interlaced: Bool) -> [UInt8] {
        let header = bigEndian32(width) + bigEndian32(height) + [8, 6, 0, 0, interlaced ? 1 : 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + pngChunk("IHDR", header)
            + pngChunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]) + pngChunk("IEND", [])
    }
}
