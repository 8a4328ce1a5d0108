import VitrineCore

/// libFuzzer entry: the JPEG marker walk, the EXIF reader behind it, and every size derived from the header, on
/// bytes as a file would give them (reads past the end come back short, as from a truncated file).
///
/// Structure-aware: an input that does not start with SOI is read as fields. Byte 0 picks the frame (baseline,
/// progressive, extended), bytes 1-4 are the height and width, byte 5 the component count (1-4) and three bytes
/// follow per component (id, sampling, table); then each segment is a marker byte, a length byte and that many
/// bytes. The file is built with SOI, the segments and SOF with every length right, an SOS and EOI, so mutations
/// land on the numbers (a 65535 side, 4x4 sampling) instead of breaking the marker walk. Seeds: corpus/jpeg/limit-*.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJPEGHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let bytes = input.starts(with: [0xFF, 0xD8]) ? input : structured(input)
    let read = { (offset: Int, count: Int) throws(ImageError) -> [UInt8] in
        guard offset >= 0, count >= 0, offset < bytes.count else { return [] }
        return Array(bytes[offset..<min(bytes.count, offset.saturatingPlus(count))])
    }
    if let header = try? JPEGHeader.parse(file: "fuzz.jpg", read: read) {
        // What the player derives from a header must not trap either.
        _ = header.displayedSize
        _ = header.colorModel
        _ = header.decoderWorkspaceBytes
    }
    if let header = try? ImageHeader.parse(file: "fuzz.jpg", fileBytes: bytes.count, read: read) {
        _ = header.displayedSize
        _ = header.decoderWorkspaceBytes
    }
    return 0
}

private func structured(_ input: [UInt8]) -> [UInt8] {
    var fields = Array(input.prefix(6))
    fields += [UInt8](repeating: 0, count: 6 - fields.count)
    let components = Int(fields[5] % 4) + 1
    var position = 6
    var frame: [UInt8] = [8] + Array(fields[1...4]) + [UInt8(components)]
    for index in 0..<components {
        let slice = position + 3 <= input.count ? Array(input[position..<position + 3]) : [UInt8(index + 1), 0x11, 0]
        frame += slice
        position += 3
    }
    var file: [UInt8] = [0xFF, 0xD8]
    while position + 2 <= input.count {
        // Any marker but SOI, EOI, SOS and the frames, which are placed here.
        var marker = input[position]
        if [0xD8, 0xD9, 0xDA, 0xC0, 0xC1, 0xC2].contains(marker) || marker < 0xC0 { marker = 0xE0 | (marker & 0x0F) }
        let length = Int(input[position + 1])
        let start = position + 2
        let end = min(input.count, start + length)
        file += segment(marker, Array(input[start..<end]))
        position = end
    }
    let sof: UInt8 = [0xC0, 0xC2, 0xC1][Int(fields[0] % 3)]
    file += segment(sof, frame)
    var scan: [UInt8] = [UInt8(components)]
    for index in 0..<components { scan += [UInt8(index + 1), 0x00] }
    file += segment(0xDA, scan + [0, 63, 0]) + [0x00, 0x00, 0xFF, 0xD9]
    return file
}

private func segment(_ marker: UInt8, _ data: [UInt8]) -> [UInt8] {
    let length = data.count + 2
    return [0xFF, marker, UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + data
}
