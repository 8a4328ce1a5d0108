import VitrineCore

/// libFuzzer entry: the JPEG marker walk and the EXIF reader behind it, on bytes as a file would give them
/// (reads past the end come back short, as from a truncated file).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJPEGHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let header = try? JPEGHeader.parse(file: "fuzz.jpg") { offset, count in
        guard offset >= 0, count >= 0, offset < bytes.count else { return [] }
        return Array(bytes[offset..<min(bytes.count, offset + count)])
    }
    if let header {
        // What the player derives from a header must not trap either.
        _ = header.displayedSize
        _ = header.colorModel
        _ = header.decoderWorkspaceBytes
    }
    return 0
}
