import VitrineCore

/// libFuzzer entry: the PNG chunk walk, the EXIF reader behind it (eXIf), and every size derived from the header,
/// on bytes as a file would give them (reads past the end come back short, as from a truncated file).
///
/// Structure-aware: an input that does not start with the PNG signature is read as fields, not as a file. Its
/// first 13 bytes are the IHDR (width, height, depth, colour type, compression, filter, interlace); then each chunk
/// is a 4-byte type, a 1-byte length and that many bytes of data. The file is built from them with the signature,
/// every length and every CRC right, so mutations land on the numbers a hostile file declares (a 2^31 - 1 side,
/// an interlaced bit) instead of breaking a checksum. The seeds (corpus/png/limit-*) hold headers at the limits.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPNGHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let bytes = input.starts(with: signature) ? input : structured(input)
    let read = { (offset: Int, count: Int) throws(ImageError) -> [UInt8] in
        guard offset >= 0, count >= 0, offset < bytes.count else { return [] }
        return Array(bytes[offset..<min(bytes.count, offset.saturatingPlus(count))])
    }
    if let header = try? PNGHeader.parse(file: "fuzz.png", read: read) {
        // What the player derives from a header must not trap, whatever size it declares.
        _ = header.storedRowBytes
        _ = header.decoderWorkspaceBytes
        _ = header.size.pixelCount
        _ = header.size.xrgbByteCount
    }
    // The way every caller reads a header: bounded before anything is derived.
    if let header = try? ImageHeader.parse(file: "fuzz.png", fileBytes: bytes.count, read: read) {
        _ = header.displayedSize
        _ = header.decoderWorkspaceBytes
    }
    return 0
}

private let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

private func structured(_ input: [UInt8]) -> [UInt8] {
    var header = Array(input.prefix(13))
    header += [UInt8](repeating: 0, count: 13 - header.count)
    var file = signature + chunk(Array("IHDR".utf8), header)
    var position = 13
    while position + 5 <= input.count {
        let type = Array(input[position..<position + 4])
        let length = Int(input[position + 4])
        let start = position + 5
        let end = min(input.count, start + length)
        file += chunk(type, Array(input[start..<end]))
        position = end
    }
    return file
}

private func chunk(_ type: [UInt8], _ data: [UInt8]) -> [UInt8] {
    let typed = type + data
    return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
}

private func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}

private func crc32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}
