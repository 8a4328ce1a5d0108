import VitrineCore

/// libFuzzer entry: the PNG chunk walk and the EXIF reader behind it (eXIf), on bytes as a file would give them
/// (reads past the end come back short, as from a truncated file).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPNGHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let header = try? PNGHeader.parse(file: "fuzz.png") { offset, count in
        guard offset >= 0, count >= 0, offset < bytes.count else { return [] }
        return Array(bytes[offset..<min(bytes.count, offset + count)])
    }
    if let header {
        // What the player derives from a header must not trap either.
        _ = ImageHeader(header).displayedSize
        _ = header.storedRowBytes
        _ = header.decoderWorkspaceBytes
    }
    return 0
}
