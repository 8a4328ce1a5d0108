import VitrineCore

/// libFuzzer entry: the WebP RIFF chunk walk (VP8, VP8L, VP8X, ANMF), the EXIF reader behind it, and every size
/// derived from the header, on bytes as a file would give them (reads past the end come back short).
///
/// Structure-aware: an input that does not start with RIFF is read as fields. Byte 0 is VP8X's flags, bytes 1-6 its
/// canvas width and height less one (24 bits each, up to 2^24), then each chunk is a four-character code, a length
/// byte and that many bytes. The file is built with the RIFF size, every chunk size and every pad byte right, so
/// mutations land on the numbers (a 2^24 canvas, the animation bit). Seeds: corpus/webp/limit-*.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebPHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let bytes = input.starts(with: Array("RIFF".utf8)) ? input : structured(input)
    let read = { (offset: Int, count: Int) throws(ImageError) -> [UInt8] in
        guard offset >= 0, count >= 0, offset < bytes.count else { return [] }
        return Array(bytes[offset..<min(bytes.count, offset.saturatingPlus(count))])
    }
    if let header = try? WebPHeader.parse(file: "fuzz.webp", fileBytes: bytes.count, read: read) {
        // What the player derives from a header must not trap, whatever size it declares.
        _ = header.decoderWorkspaceBytes
        _ = header.size.pixelCount
    }
    if let header = try? ImageHeader.parse(file: "fuzz.webp", fileBytes: bytes.count, read: read) {
        _ = header.displayedSize
        _ = header.decoderWorkspaceBytes
    }
    return 0
}

private func structured(_ input: [UInt8]) -> [UInt8] {
    var fields = Array(input.prefix(7))
    fields += [UInt8](repeating: 0, count: 7 - fields.count)
    var body = Array("WEBP".utf8) + chunk(Array("VP8X".utf8), [fields[0], 0, 0, 0] + Array(fields[1...6]))
    var position = 7
    while position + 5 <= input.count {
        let code = Array(input[position..<position + 4])
        let length = Int(input[position + 4])
        let start = position + 5
        let end = min(input.count, start + length)
        body += chunk(code, Array(input[start..<end]))
        position = end
    }
    return Array("RIFF".utf8) + littleEndian(UInt32(body.count)) + body
}

private func chunk(_ code: [UInt8], _ data: [UInt8]) -> [UInt8] {
    code + littleEndian(UInt32(data.count)) + data + (data.count % 2 == 1 ? [0] : [])
}

private func littleEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
}
